#include "compute_thread.h"

#include <algorithm>

namespace llama_dialog {

ComputeThread::ComputeThread() : state_(std::make_shared<State>()) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  thread_ = std::thread(Loop, state_);
  state_->threadId = thread_.get_id();
}

ComputeThread::~ComputeThread() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  if (!thread_.joinable()) return;
  if (std::this_thread::get_id() == thread_.get_id()) {
    thread_.detach();  // the last owner was a task on this thread: it ends when that task returns
  } else {
    thread_.join();
  }
}

void ComputeThread::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->tasks.push_back(std::move(task));
  }
  state_->wake.notify_one();
}

void ComputeThread::Activate(std::shared_ptr<SteppedWork> work) {
  auto& active = state_->active;
  if (std::find(active.begin(), active.end(), work) == active.end()) active.push_back(std::move(work));
}

void ComputeThread::Loop(std::shared_ptr<State> state) {
  for (;;) {
    std::deque<std::function<void()>> tasks;
    {
      std::unique_lock<std::mutex> lock(state->mutex);
      // Idle (nothing to step): sleep until a task arrives. Busy: only pick up what is queued, then step.
      state->wake.wait(lock, [&] { return state->stop || !state->tasks.empty() || !state->active.empty(); });
      if (state->stop && state->tasks.empty()) return;
      tasks.swap(state->tasks);
    }
    for (auto& task : tasks) {
      task();
      task = nullptr;  // drop what it holds (engines, models) on this thread, in order
    }
    // Round-robin over the engines that have work: one step each, so that no engine starves another.
    auto& active = state->active;
    for (size_t i = 0; i < active.size(); ++i) {
      if (active[i]->HasWork()) active[i]->Step();
    }
    active.erase(std::remove_if(active.begin(), active.end(), [](const auto& w) { return !w->HasWork(); }), active.end());
  }
}

}  // namespace llama_dialog
