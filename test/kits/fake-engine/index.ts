// The fake engine of the test kit: one KV-mirror model, one context, and the languages that say what it generates.
export { KvMirror } from './kv-mirror.js';
export { FakeContext, type FakeContextCall, type FakeContextOptions } from './fake-context.js';
export { HashedLanguage, OPEN_VOCABULARY, type FakeLanguage, type HashedLanguageOptions } from './fake-language.js';
export { FAKE_EOS, FakeModel, type FakeCall } from './fake-model.js';
export { FakeSequence, FakeSharedContext, type FakeSharedContextOptions } from './fake-shared-context.js';
