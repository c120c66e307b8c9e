// Types of scripts/fetch-test-models.mjs (a dependency-free script: it runs before any build).
export const MANIFEST_PATH: string;
export class ModelFetchError extends Error {}
export function modelCacheDir(env?: NodeJS.ProcessEnv): string;
export function readManifest(path?: string): { name: string; file: string; size: number; sha256: string }[];
export function verifyModelFile(model: { size: number; sha256: string }, path: string): Promise<string | null>;
export function fetchTestModels(
  names: string[],
  options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; manifestPath?: string },
): Promise<Record<string, string>>;
export interface ManifestVoice {
  name: string;
  folder: string;
  package: string;
  version: string;
  imported: { model: string; tokens: string };
}
export function readManifestVoices(path?: string): ManifestVoice[];
export function voiceFolderPath(voice: ManifestVoice, env?: NodeJS.ProcessEnv): string;
export function verifyVoiceFolder(voice: ManifestVoice, path: string): Promise<string | null>;
export function fetchTestVoices(
  names: string[],
  options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; manifestPath?: string },
): Promise<Record<string, string>>;
