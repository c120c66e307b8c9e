// Child process for test/model/teardown.test.ts: tears a JS environment down while a generation runs.
// Talks to the raw addon (no TypeScript loader is needed in the worker threads it starts).
//   node teardown-child.cjs <mode> <model.gguf>
// Modes:
//   exit-main        process.exit(0) from the first streamed piece of a main-thread generation
//   terminate-stream worker.terminate() once a worker's streaming generation has produced a piece
//   terminate-plain  worker.terminate() right after a worker queued a non-streaming generation
//   exit-with-worker process.exit(0) on the main thread while a worker generates
//   terminate-shared worker.terminate() while four sequences of a shared context stream their generations
//   idle-shared      a shared context generates once and is never disposed: the process must end by itself
// Each generation asks for far more tokens than the tests' time limit allows, so a clean exit within
// that limit means the work was aborted rather than waited for.
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const path = require('node:path');

const addonPath = process.env.LLAMA_DIALOG_BINARY || path.join(__dirname, '..', '..', '..', 'build', 'Release', 'llama_dialog.node');

function loadAddon() {
  const addon = require(addonPath);
  // A prebuilt-shaped addon carries ggml's backends as modules beside it (the TS loader does the same).
  if (addon.dynamicBackends) addon.loadBackendsFrom(path.dirname(addonPath));
  return addon;
}
const CONTEXT_SIZE = 65536;

async function startGeneration(modelPath, onFirstPiece, onQueued) {
  const addon = loadAddon();
  const model = await addon.loadModel(modelPath, {});
  const context = await model.createContext({ contextSize: CONTEXT_SIZE, batchSize: 512, threads: 1, kvCacheType: 'f16', flashAttention: 'auto' });
  const prompt = Int32Array.from({ length: 8 }, (_, i) => 1000 + i * 17);
  let first = true;
  const onPiece = onFirstPiece
    ? () => {
        if (first) {
          first = false;
          onFirstPiece();
        }
      }
    : undefined;
  const generation = context.generate({ prompt, maxTokens: CONTEXT_SIZE - prompt.length, sampling: { temperature: 0 }, stop: [] }, onPiece);
  if (onQueued) onQueued();
  return generation;
}

async function startSharedGenerations(modelPath, onFirstPiece, maxTokens) {
  const addon = loadAddon();
  const model = await addon.loadModel(modelPath, {});
  const shared = await model.createSharedContext({ sequences: 4, contextSize: 4 * 8192, batchSize: 512, threads: 1, kvCacheType: 'f16', flashAttention: 'auto' });
  let first = true;
  const onPiece = () => {
    if (first && onFirstPiece) {
      first = false;
      onFirstPiece();
    }
  };
  return Promise.all(
    Array.from({ length: 4 }, (_, s) => {
      const sequence = shared.createSequence({ contextSize: 8192 });
      const prompt = Int32Array.from({ length: 8 + s }, (_, i) => 1000 + i * 17 + s);
      return sequence.generate({ prompt, maxTokens: maxTokens ?? 8192 - prompt.length, sampling: { temperature: 0 }, stop: [] }, onPiece);
    }),
  );
}

if (!isMainThread) {
  const { modelPath, streaming, shared } = workerData;
  if (shared) {
    startSharedGenerations(modelPath, () => parentPort.postMessage('generating'));
  } else if (streaming) {
    startGeneration(modelPath, () => parentPort.postMessage('generating'));
  } else {
    // The generation is queued (or already running) when the parent hears this.
    startGeneration(modelPath, undefined, () => parentPort.postMessage('generating'));
  }
} else {
  const [mode, modelPath] = process.argv.slice(2);
  const startWorker = (streaming, shared = false) => new Worker(__filename, { workerData: { modelPath, streaming, shared } });
  if (mode === 'exit-main') {
    startGeneration(modelPath, () => {
      console.log('EXITING');
      process.exit(0);
    });
  } else if (mode === 'terminate-stream' || mode === 'terminate-plain') {
    const worker = startWorker(mode === 'terminate-stream');
    worker.once('message', async () => {
      const code = await worker.terminate();
      // The process then ends by itself: nothing the worker left behind may keep the loop alive.
      console.log(`TERMINATED ${code}`);
    });
  } else if (mode === 'exit-with-worker') {
    const worker = startWorker(true);
    worker.once('message', () => {
      console.log('EXITING');
      process.exit(0);
    });
  } else if (mode === 'terminate-shared') {
    const worker = startWorker(true, true);
    worker.once('message', async () => {
      const code = await worker.terminate();
      console.log(`TERMINATED ${code}`);
    });
  } else if (mode === 'idle-shared') {
    // Nothing is disposed: the event loop must not be held by the finished operations' completion channels.
    startSharedGenerations(modelPath, undefined, 4).then((results) => console.log(`DONE ${results.length}`));
  } else {
    console.error(`unknown mode ${mode}`);
    process.exit(2);
  }
}
