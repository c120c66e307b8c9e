#include "state_staging.h"

namespace llama_dialog {

StateStaging::StateStaging() : buffer_(std::make_shared<Buffer>()) {}

std::shared_ptr<const StateBytes> StateStaging::Stage(const uint8_t* data, size_t size) {
  std::shared_ptr<Buffer> buffer = buffer_;
  {
    std::lock_guard<std::mutex> lock(buffer->mutex);
    if (!buffer->inUse) {
      buffer->inUse = true;
      buffer->bytes.assign(data, data + size);  // keeps its capacity: no new pages once it has held this size
      return std::shared_ptr<const StateBytes>(&buffer->bytes, [buffer](const StateBytes*) {
        std::lock_guard<std::mutex> release(buffer->mutex);
        buffer->inUse = false;
      });
    }
  }
  return std::make_shared<const StateBytes>(data, data + size);
}

}  // namespace llama_dialog
