#include <napi.h>
#include "llama.h"
static Napi::Object Init(Napi::Env env, Napi::Object exports) { llama_backend_init(); return exports; }
NODE_API_MODULE(llama_dialog, Init)
