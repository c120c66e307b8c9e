// The llama_model a ModelHandle and all of its contexts share. Owned through std::shared_ptr so
// that contexts keep their model alive after the JS Model is disposed; freed with the last owner.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "llama.h"
#include "state_staging.h"

namespace llama_dialog {
class ComputeThread;
}

namespace llama_dialog {

struct ModelLoadOptions {
  std::string path;
  int32_t gpuLayers = -1;  // -1 = all layers that fit (llama.cpp's default)
  int useMmap = -1;        // -1 = llama.cpp decides, 0 = read into memory, 1 = mmap
  bool vocabOnly = false;
};

class LoadedModel {
 public:
  /**
   * Checks the file (exists, GGUF magic, header readable, tensor data inside the file) and loads
   * it. Throws DialogError(ModelLoadFailed) with a message that says which check failed. Blocking.
   */
  static std::shared_ptr<LoadedModel> Load(const ModelLoadOptions& options);

  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  llama_model* model() const { return model_; }
  const llama_vocab* vocab() const { return vocab_; }
  bool vocabOnly() const { return vocabOnly_; }
  int32_t vocabSize() const { return vocabSize_; }
  uint64_t fileSize() const { return fileSize_; }
  /** Weight bytes held in process memory (not file-backed by mmap), reported to the JS GC. */
  int64_t residentBytes() const { return residentBytes_; }
  const std::string& path() const { return path_; }
  std::string architecture() const;
  /** Attention heads of layer 0; 0 for a model without layers (llama.cpp aborts when asked then). */
  int32_t heads() const;
  int32_t kvHeads() const;
  /** Identifies the model's shape and file, stored in saved states so another model's state is refused. */
  uint64_t fingerprint() const;
  /** The model's own compute thread (compute_thread.h), started on first use. */
  ComputeThread& computeThread() const;
  /** Where loadState's bytes wait for the compute thread (state_staging.h). */
  StateStaging& stateStaging() const { return stateStaging_; }

 private:
  LoadedModel(llama_model* model, bool vocabOnly, uint64_t fileSize, std::string path, bool mmapped);

  llama_model* model_;
  const llama_vocab* vocab_;
  bool vocabOnly_;
  int32_t vocabSize_;
  uint64_t fileSize_;
  std::string path_;
  int64_t residentBytes_;
  mutable std::once_flag computeThreadOnce_;
  mutable std::unique_ptr<ComputeThread> computeThread_;
  mutable StateStaging stateStaging_;
};

}  // namespace llama_dialog
