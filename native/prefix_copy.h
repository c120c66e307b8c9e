// Shared-prefix spawn (SPEC §2.4) as one compute-thread job: a sequence takes over the first tokens of another
// sequence of the same engine by llama_memory_seq_cp, without decoding them.
#pragma once

#include <memory>
#include <vector>

#include "llama.h"

namespace llama_dialog {

class Engine;
class Operation;
class Sequence;

class PrefixCopy : public std::enable_shared_from_this<PrefixCopy> {
 public:
  /**
   * Copies `length` tokens of `source` into `target`. With `expected` (verified), the source may be running: the copy
   * takes the longest prefix of `expected` the source holds when it runs, and waits while the source is still
   * decoding a prompt that will cover more of it. Resolves `operation` with the number of tokens copied.
   */
  PrefixCopy(std::shared_ptr<Engine> engine, std::shared_ptr<Sequence> target, std::shared_ptr<Sequence> source,
             size_t length, bool verified, std::vector<llama_token> expected);

  /** Compute thread, between two engine steps. Throws DialogError on a refusal. */
  void Run(const std::shared_ptr<Operation>& operation);

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Sequence> target_;
  std::shared_ptr<Sequence> source_;
  size_t length_;
  bool verified_;
  std::vector<llama_token> expected_;
};

}  // namespace llama_dialog
