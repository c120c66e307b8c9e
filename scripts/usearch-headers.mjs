// Where USearch's C++ headers are: the `usearch` npm package (a devDependency, pinned like llama.cpp's bundle). Only
// its include/ folder is used, compiled into the addon (native/vector_index.cpp); its own addon, its prebuilt binaries
// and its install script are never used (npm does not run a devDependency's install script unless allowed).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PINNED_USEARCH = '2.26.2';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The folder holding `usearch/index_dense.hpp`; throws with the fix when the package is missing. */
export function usearchIncludeDir(env = process.env) {
  if (env.USEARCH_INCLUDE_DIR) return env.USEARCH_INCLUDE_DIR;
  // Looked up like Node looks up a package (node_modules here, then in each parent folder); not with require.resolve,
  // because the package's `exports` map does not expose its package.json.
  const packageDir = createRequire(join(root, 'package.json'))
    .resolve.paths('usearch')
    ?.map((folder) => join(folder, 'usearch'))
    .find((folder) => existsSync(join(folder, 'package.json')));
  if (packageDir === undefined) {
    throw new Error(`building from source needs USearch's headers: npm install --no-save --ignore-scripts usearch@${PINNED_USEARCH} (or set USEARCH_INCLUDE_DIR)`);
  }
  const include = join(packageDir, 'include');
  if (!existsSync(join(include, 'usearch', 'index_dense.hpp'))) {
    throw new Error(`${include} holds no usearch/index_dense.hpp; reinstall usearch@${PINNED_USEARCH}`);
  }
  return include;
}
