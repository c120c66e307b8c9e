// Child process for synchronous-call tests whose failure mode, before the fix, was a process abort
// (std::terminate or GGML_ASSERT): run there, an abort fails one test instead of the test worker.
//   node sync-child.cjs <mode> <model.gguf>
// Prints one JSON line: {"result": ...} or {"code": <number|null>, "message": "..."}.
'use strict';
const path = require('node:path');

const addonPath = process.env.LLAMA_DIALOG_BINARY || path.join(__dirname, '..', '..', '..', 'build', 'Release', 'llama_dialog.node');

function loadAddon() {
  const addon = require(addonPath);
  // A prebuilt-shaped addon carries ggml's backends as modules beside it (the TS loader does the same).
  if (addon.dynamicBackends) addon.loadBackendsFrom(path.dirname(addonPath));
  return addon;
}

async function main() {
  const [mode, modelPath] = process.argv.slice(2);
  const addon = loadAddon();
  const model = await addon.loadModel(modelPath, { vocabOnly: true });
  try {
    let result;
    if (mode === 'tokenize') {
      // A character an SPM vocabulary without byte tokens cannot spell.
      result = Array.from(model.tokenize('hello 🦙', false, false));
    } else if (mode === 'token-to-piece') {
      result = model.tokenToPiece(0, false);
    } else if (mode === 'detokenize-huge') {
      // 2^28 tokens: 8 bytes each overflow llama_detokenize's int32 buffer size. Zero-filled pages
      // are not touched unless the addon copies them.
      result = model.detokenize(new Int32Array(268_435_456), false).length;
    } else {
      throw new Error(`unknown mode ${mode}`);
    }
    console.log(JSON.stringify({ result }));
  } catch (error) {
    console.log(JSON.stringify({ code: typeof error.code === 'number' ? error.code : null, message: String(error.message) }));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(3);
});
