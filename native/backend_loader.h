// Which ggml backends this process runs on, and loading them from the prebuilt packages' folders.
//
// A source build links ggml's backends statically: they are registered before any JS runs and the
// loading functions report that nothing was loaded. A prebuilt package (GGML_BACKEND_DL) holds each
// backend as a module: the JS loader calls loadBackendsFrom(<package folder>) once, which lets ggml
// score the CPU variants (libggml-cpu-<level>.so) by CPUID and load the best, and loadBackendFile for
// each installed GPU module. The paths ggml reports are captured from its INFO log so that
// systemInfo() can name the variant it chose.
#pragma once

#include <napi.h>

namespace llama_dialog {

/** JS: loadBackendsFrom(dir) → { dynamic, loaded: [{ backend, path }], errors: string[] }. */
Napi::Value LoadBackendsFrom(const Napi::CallbackInfo& info);

/** JS: loadBackendFile(path) → { backend: string | null, error: string | null }. */
Napi::Value LoadBackendFile(const Napi::CallbackInfo& info);

/** JS: probeLibrary(soname) → null when the dynamic linker can load it, else its error text. */
Napi::Value ProbeLibrary(const Napi::CallbackInfo& info);

/** JS: listBackends() → [{ name, devices: [{ name, description, type }], features: { name: value } }]. */
Napi::Value ListBackends(const Napi::CallbackInfo& info);

}  // namespace llama_dialog
