// One compute thread per loaded model: every llama.cpp computation of the model's contexts runs on it.
//
// Why one thread per model: ggml's CPU backend (built with OpenMP) keeps one OpenMP thread team per calling
// thread. Decodes issued from different threads create several teams whose idle members count against the CPU
// count; libgomp then throttles its spin-waiting and every barrier inside a graph pays a futex wake-up. Measured
// on the `small` synthetic model, 2 threads: decode 59 t/s from a second thread vs 77 t/s when one thread issues
// every decode. One thread per model keeps one warm team per model (as llama-bench's main thread), while two
// models still compute in parallel.
//
// Why it never blocks a libuv thread: JS queues work here and returns at once; the results travel back
// through a thread-safe function (operation.h). An engine with pending decode work is "active" and gets one
// Step() per round; one-shot tasks (save, load, release, free) run between steps, in the order queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace llama_dialog {

/** Decode work that advances one step at a time (an Engine). Compute thread only. */
class SteppedWork {
 public:
  virtual ~SteppedWork() = default;
  virtual bool HasWork() const = 0;
  virtual void Step() = 0;
};

class ComputeThread {
 public:
  ComputeThread();
  /** Stops the thread after its current task; joins it, or detaches when called from the thread itself. */
  ~ComputeThread();
  ComputeThread(const ComputeThread&) = delete;
  ComputeThread& operator=(const ComputeThread&) = delete;

  /** Any thread: runs `task` on the compute thread (in order, between steps). Tasks handle their own errors. */
  void Post(std::function<void()> task);
  /** Compute thread: `work` gets a Step() per round until it has no work left. */
  void Activate(std::shared_ptr<SteppedWork> work);
  bool IsCurrentThread() const { return std::this_thread::get_id() == state_->threadId; }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> tasks;
    bool stop = false;
    std::thread::id threadId;
    // Compute thread only.
    std::vector<std::shared_ptr<SteppedWork>> active;
  };
  static void Loop(std::shared_ptr<State> state);

  // Shared with the thread: it may outlive this object (destroyed from a task on the thread itself).
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace llama_dialog
