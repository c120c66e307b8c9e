// Where the bytes of a saved state wait between loadState's call (JS thread) and the restore (compute thread).
//
// Why not fresh memory each time: a state is tens of megabytes, and fresh memory costs a page fault per 4 KiB on
// first touch. On this project's VM that made a restore of 1,500 tokens of the small model take ~230 ms, most of it
// faults, against ~3 s to re-decode them. One buffer per model, kept at the largest state it has held, faults only
// the first time. Loads on one model run one after another on its compute thread, so one buffer serves them; a
// second load staged while the first still holds it gets fresh memory. Both are StateBytes: not zero-filled first,
// and on huge pages where the kernel gives them (state_bytes.h), so even the first fill faults little.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "state_bytes.h"

namespace llama_dialog {

class StateStaging {
 public:
  StateStaging();
  /** JS thread: a copy of `data` that stays valid while the returned pointer lives. */
  std::shared_ptr<const StateBytes> Stage(const uint8_t* data, size_t size);

 private:
  struct Buffer {
    std::mutex mutex;
    StateBytes bytes;
    bool inUse = false;
  };
  // Shared with the leases it hands out, so a lease may outlive the model.
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace llama_dialog
