// binding._internal: the pure units of the addon (text_stream, state_format) reachable from tests without a
// model. Not part of the public API (src/native/binding.ts types it as internal).
#pragma once

#include <napi.h>

namespace llama_dialog {

Napi::Object CreateInternalEntry(Napi::Env env);

}  // namespace llama_dialog
