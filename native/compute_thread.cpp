#include "compute_thread.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace llama_dialog {
namespace {

struct Job {
  const std::function<void()>* task;
  std::exception_ptr error;
  bool done = false;
};

class ComputeThread {
 public:
  ComputeThread() : thread_([this] { Loop(); }) {
    id_ = thread_.get_id();
    // Never joined: the thread lives as long as the process, and joining at static destruction would
    // race with libuv's own teardown. Detach keeps exit from hanging on it.
    thread_.detach();
  }

  void Run(const std::function<void()>& task) {
    if (std::this_thread::get_id() == id_) {  // nested call from a task: run inline
      task();
      return;
    }
    Job job{&task, nullptr, false};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(&job);
    }
    wake_.notify_one();
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void Loop() {
    for (;;) {
      Job* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return !queue_.empty(); });
        job = queue_.front();
        queue_.pop_front();
      }
      try {
        (*job->task)();
      } catch (...) {
        job->error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        job->done = true;
      }
      finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<Job*> queue_;
  std::thread::id id_;
  std::thread thread_;
};

ComputeThread& Instance() {
  // Leaked on purpose (see the detach above): never destroyed while a libuv thread may still wait on it.
  static ComputeThread* instance = new ComputeThread();
  return *instance;
}

}  // namespace

void RunOnComputeThread(const std::function<void()>& task) { Instance().Run(task); }

}  // namespace llama_dialog
