// A process-wide cap on the threads a decode may use, set from JS while speech synthesis runs.
//
// Why: on a machine whose cores the model's threads already fill, a synthesis thread (sherpa-onnx, one ORT thread)
// makes ggml's threads wait on each other at every barrier: measured on 2 cores, SmolLM2 with 2 threads fell from
// ~100 to ~38 tokens/s beside a synthesis, while 1 thread kept ~85. So while speech holds a core, decodes use the
// cores left (never fewer than 1, never more than their own setting). Read on the compute thread before each decode.
#pragma once

#include <napi.h>

#include <cstdint>

namespace llama_dialog {

/** Most threads a decode may use now; 0 = no cap. Any thread. */
int32_t DecodeThreadCap();

/** JS: setDecodeThreadCap(cap: number): 0 removes the cap. Takes effect at each context's next decode. */
Napi::Value SetDecodeThreadCap(const Napi::CallbackInfo& info);

}  // namespace llama_dialog
