// GBNF grammars for constrained generation: the JSON-schema converter export, and the check that
// turns llama.cpp's "print and return null" grammar errors into typed errors.
#pragma once

#include <napi.h>

#include <string>

#include "llama.h"

namespace llama_dialog {

/** jsonSchemaToGrammar(schemaJson: string): string — llama.cpp's own converter; InvalidArgument on bad input. */
Napi::Value JsonSchemaToGrammar(const Napi::CallbackInfo& info);

/** A grammar sampler for `grammar` (root rule `root`); throws DialogError(InvalidArgument) with the
 *  parser's message when llama.cpp refuses it. Never returns null. */
llama_sampler* CreateGrammarSampler(const llama_vocab* vocab, const std::string& grammar);

}  // namespace llama_dialog
