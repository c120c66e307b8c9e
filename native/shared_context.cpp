#include "shared_context.h"

#include "addon_data.h"
#include "context.h"
#include "errors.h"
#include "js_args.h"
#include "operation.h"

namespace llama_dialog {

Napi::Function SharedContextHandle::DefineClass(Napi::Env env) {
  return Napi::ObjectWrap<SharedContextHandle>::DefineClass(
      env, "SharedContextHandle",
      {
          InstanceMethod<&SharedContextHandle::Sequences>("sequences"),
          InstanceMethod<&SharedContextHandle::ContextSize>("contextSize"),
          InstanceMethod<&SharedContextHandle::MaxContextSize>("maxContextSize"),
          InstanceMethod<&SharedContextHandle::Resizes>("resizes"),
          InstanceMethod<&SharedContextHandle::SequenceContextSize>("sequenceContextSize"),
          InstanceMethod<&SharedContextHandle::KvLayout>("kvLayout"),
          InstanceMethod<&SharedContextHandle::KvBytesPerCell>("kvBytesPerCell"),
          InstanceMethod<&SharedContextHandle::LiveSequences>("liveSequences"),
          InstanceMethod<&SharedContextHandle::CellsUsed>("cellsUsed"),
          InstanceMethod<&SharedContextHandle::CreateSequence>("createSequence"),
          InstanceMethod<&SharedContextHandle::Dispose>("dispose"),
      });
}

Napi::Object SharedContextHandle::NewInstance(Napi::Env env, std::shared_ptr<Engine> engine) {
  return GetAddonData(env).sharedContextConstructor.New({Napi::External<std::shared_ptr<Engine>>::New(env, &engine)});
}

SharedContextHandle::SharedContextHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SharedContextHandle>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "SharedContextHandle cannot be constructed directly; use model.createSharedContext()");
  }
  engine_ = std::move(*info[0].As<Napi::External<std::shared_ptr<Engine>>>().Data());
  reportedBytes_ = engine_->kvBytes();
  if (reportedBytes_ != 0) Napi::MemoryManagement::AdjustExternalMemory(info.Env(), reportedBytes_);
}

SharedContextHandle::~SharedContextHandle() {
  if (reportedBytes_ != 0) Napi::MemoryManagement::AdjustExternalMemory(Env(), -reportedBytes_);
}

Engine& SharedContextHandle::Live(Napi::Env env) const {
  if (!engine_) ThrowJs(env, ErrorCode::ObjectDisposed, "the shared context has been disposed");
  return *engine_;
}

Napi::Value SharedContextHandle::Sequences(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Live(info.Env()).sequenceCapacity());
}

void SharedContextHandle::ReportMemory(Napi::Env env) {
  if (!engine_) return;
  const int64_t bytes = engine_->kvBytes();
  if (bytes == reportedBytes_) return;
  Napi::MemoryManagement::AdjustExternalMemory(env, bytes - reportedBytes_);
  reportedBytes_ = bytes;
}

Napi::Value SharedContextHandle::ContextSize(const Napi::CallbackInfo& info) {
  const uint32_t cells = Live(info.Env()).contextSize();
  ReportMemory(info.Env());
  return Napi::Number::New(info.Env(), cells);
}

Napi::Value SharedContextHandle::MaxContextSize(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Live(info.Env()).maxContextSize());
}

Napi::Value SharedContextHandle::Resizes(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), engine_ ? engine_->resizes() : 0);
}

Napi::Value SharedContextHandle::SequenceContextSize(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Live(info.Env()).sequenceContextSize());
}

Napi::Value SharedContextHandle::KvLayout(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), Live(info.Env()).unifiedKv() ? "unified" : "perSequence");
}

Napi::Value SharedContextHandle::KvBytesPerCell(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(Live(info.Env()).kvBytesPerCell()));
}

Napi::Value SharedContextHandle::LiveSequences(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), engine_ ? engine_->liveSequences() : 0);
}

Napi::Value SharedContextHandle::CellsUsed(const Napi::CallbackInfo& info) {
  ReportMemory(info.Env());
  return Napi::Number::New(info.Env(), engine_ ? engine_->cellsUsed() : 0);
}

Napi::Value SharedContextHandle::CreateSequence(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Engine& engine = Live(env);
  return SyncGuarded(env, "cannot create a sequence", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    if (!info[0].IsObject()) throw DialogError(ErrorCode::InvalidArgument, "createSequence expects { contextSize }");
    const auto contextSize =
        static_cast<uint32_t>(IntProp(info[0].As<Napi::Object>(), "contextSize", engine.sequenceContextSize(), 1, 1 << 24));
    std::shared_ptr<Sequence> sequence = engine.CreateSequence(contextSize);
    return ContextHandle::NewInstance(env, engine_, std::move(sequence), false);
  });
}

Napi::Value SharedContextHandle::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (reportedBytes_ != 0) {
    Napi::MemoryManagement::AdjustExternalMemory(env, -reportedBytes_);
    reportedBytes_ = 0;
  }
  if (!engine_) {
    auto deferred = Napi::Promise::Deferred::New(env);
    deferred.Resolve(env.Undefined());
    return deferred.Promise();
  }
  std::shared_ptr<Engine> engine = std::move(engine_);
  engine->Retire();
  try {
    std::shared_ptr<Operation> operation = Operation::Start(env, "disposeShared", Napi::Function(), [](Napi::Env) {});
    ComputeThread& thread = engine->computeThread();
    // Queued behind every operation already queued: running requests finish (or fail) before the context goes.
    thread.Post([operation, engine = std::move(engine)]() mutable {
      engine->Release();
      engine.reset();
      operation->Resolve(nullptr);
    });
    return operation->Promise();
  } catch (const DialogError& e) {
    return RejectedPromise(env, e.code(), e.what());
  }
}

}  // namespace llama_dialog
