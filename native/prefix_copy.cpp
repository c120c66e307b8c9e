#include "prefix_copy.h"

#include <utility>

#include "engine.h"
#include "operation.h"
#include "sequence.h"

namespace llama_dialog {

PrefixCopy::PrefixCopy(std::shared_ptr<Engine> engine, std::shared_ptr<Sequence> target, std::shared_ptr<Sequence> source,
                       size_t length, bool verified, std::vector<llama_token> expected)
    : engine_(std::move(engine)),
      target_(std::move(target)),
      source_(std::move(source)),
      length_(length),
      verified_(verified),
      expected_(std::move(expected)) {}

void PrefixCopy::Run(const std::shared_ptr<Operation>& operation) {
  // A source still decoding a prompt that covers more of `expected` gets one more engine round first: copying now
  // would leave the target to decode again what the source is about to hold. A source that is released or
  // disposed meanwhile holds nothing any more, so the copy then takes nothing.
  if (verified_ && source_->MatchingPrefixAfterPrompt(expected_) > source_->MatchingPrefix(expected_)) {
    std::shared_ptr<PrefixCopy> self = shared_from_this();
    engine_->computeThread().Post([self, operation]() {
      try {
        self->Run(operation);
      } catch (...) {
        operation->RejectCurrentException();
      }
    });
    return;
  }
  const size_t copied = verified_ ? source_->MatchingPrefix(expected_) : length_;
  target_->CopyPrefixFrom(*source_, copied);
  engine_->RefreshCellsUsed();
  operation->Resolve([copied](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, static_cast<double>(copied)); });
}

}  // namespace llama_dialog
