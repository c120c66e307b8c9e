#!/usr/bin/env node
/**
 * Import-boundary check: imports inside src/ point one way, down the layers (SPEC §1, CONVENTIONS "Learned from
 * the first review"). Dependency-free on purpose: it runs in the unit tests (test/unit/scripts/check-layers.test.ts),
 * so `npm test` fails on a violation.
 *
 *   node scripts/check-layers.mjs [root]     exit 0: clean; exit 1: one line per violation on stderr
 *
 * LAYERS is the one table of what may import what. A layer may import itself and every layer listed before it,
 * except a layer that names its only importers (`importedOnlyBy`). A lower layer that needs something from a higher
 * one declares a small interface instead (e.g. graph's VariableStore, InferencePort, NodeStepDiagnostics).
 *
 * Why this order (lowest first):
 * - foundation: src/errors.ts and src/util/ (validation formatting, seeded RNG, progress bar) serve every layer.
 * - native → engine: the addon's typed surface, then Model / Context over it.
 * - gguf, synthetic: file tooling; synthetic writes GGUFs and finds the package root through the loader.
 * - models: the model cache, the pinned real models (test-models.json) and downloads into the cache.
 * - knowledge: string storages, knowledge bases, filters and vector search (embeds through engine).
 * - voice: speech synthesis (voices, the sherpa-onnx engine, voice import), sentence segmentation, audio cache;
 *   below graph so speaking nodes and the agent can use it, above models for the fetch-and-pin cache.
 * - dialog → prompt: the projector reads the dialog, the dialog knows nothing of prompts.
 * - graph: the node contract and node types; it sees models only through interfaces it declares.
 * - diag: explains cache misses and assembles per-turn diagnostics from what graph nodes record.
 * - host: model registry, per-model scheduling, node caches; implements graph's inference port.
 * - agent: turn state machine, turn runner, session.
 * - server (TCP protocol) and bench (the benchmark harness) sit on the agent; only the CLI reaches bench.
 * - cli, then index.ts (the public surface).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Lowest first. `paths` (relative to src/) default to the layer's own folder. */
export const LAYERS = [
  { name: 'foundation', paths: ['errors.ts', 'util'] },
  { name: 'native' },
  { name: 'engine' },
  { name: 'gguf' },
  { name: 'synthetic' },
  { name: 'models' },
  { name: 'knowledge' },
  { name: 'voice' },
  { name: 'dialog' },
  { name: 'prompt' },
  { name: 'graph' },
  { name: 'diag' },
  { name: 'host' },
  { name: 'agent' },
  { name: 'server', importedOnlyBy: ['cli', 'index'] },
  { name: 'bench', importedOnlyBy: ['cli'] },
  { name: 'cli' },
  { name: 'index', paths: ['index.ts'] },
];

const rank = new Map(LAYERS.map((layer, index) => [layer.name, index]));

/** The layer a path under src/ belongs to, or undefined for a file no layer claims. */
export function layerOf(pathInSrc) {
  // Imports name the compiled file (`../errors.js`): compare stems, not extensions.
  const stem = (name) => name.replace(/\.(ts|mts|js|mjs)$/, '');
  const first = stem(pathInSrc.split(/[\\/]/)[0]);
  for (const layer of LAYERS) {
    for (const claimed of layer.paths ?? [layer.name]) {
      if (first === stem(claimed)) return layer.name;
    }
  }
  return undefined;
}

/** Why `from` may not import `to` (both layer names), or undefined when it may. */
export function importProblem(from, to) {
  if (from === to) return undefined;
  const target = LAYERS[rank.get(to)];
  if (target.importedOnlyBy && !target.importedOnlyBy.includes(from)) {
    return `only ${target.importedOnlyBy.join(' and ')} may import ${to}`;
  }
  if (rank.get(to) > rank.get(from)) return `${from} sits below ${to}`;
  return undefined;
}

const IMPORT_PATTERNS = [
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gms,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** Relative module specifiers a source file imports (static, re-exports, side-effect and dynamic imports). */
export function importSpecifiers(source) {
  const found = new Set();
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of source.matchAll(pattern)) if (match[1].startsWith('.')) found.add(match[1]);
  }
  return [...found];
}

function sourceFiles(folder) {
  const files = [];
  for (const entry of readdirSync(folder)) {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|js|mjs)$/.test(entry) && !entry.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** Every violation under `root`/src, as `file: import 'spec' (reason)` lines, sorted. */
export function checkLayers(root) {
  const src = resolve(root, 'src');
  const violations = [];
  for (const file of sourceFiles(src)) {
    const pathInSrc = relative(src, file);
    const from = layerOf(pathInSrc);
    const shown = `src/${pathInSrc.split(sep).join('/')}`;
    if (!from) {
      violations.push(`${shown}: belongs to no layer (add its folder to LAYERS in scripts/check-layers.mjs)`);
      continue;
    }
    for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = relative(src, resolve(dirname(file), specifier));
      if (target.startsWith('..')) {
        violations.push(`${shown}: import '${specifier}' (leaves src/)`);
        continue;
      }
      const to = layerOf(target);
      const problem = to === undefined ? 'into no layer' : importProblem(from, to);
      if (problem) violations.push(`${shown}: import '${specifier}' (${problem})`);
    }
  }
  return violations.sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const violations = checkLayers(root);
  for (const line of violations) process.stderr.write(`${line}\n`);
  if (violations.length > 0) {
    process.stderr.write(`check-layers: ${violations.length} import(s) against the layer order\n`);
    process.exit(1);
  }
  process.stdout.write(`check-layers: ${LAYERS.length} layers, imports point one way\n`);
}
