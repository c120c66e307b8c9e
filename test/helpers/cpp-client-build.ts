// Builds C++ programs against clients/cpp/llama_dialog_client.hpp for the e2e tests, the way a game
// programmer would: one g++ call, C++17, the header's folder and nlohmann/json (vendored by llama.cpp)
// on the include path.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { llamaCppDir, repoRoot } from './llama-cpp.js';

const run = promisify(execFile);

/** The C++ compiler the tests use: `CXX` when set, else g++. */
export const cxx = process.env.CXX !== undefined && process.env.CXX !== '' ? process.env.CXX : 'g++';

/**
 * Compiles one C++ source file of the repository into a fresh temporary folder and returns the program's path.
 * Async, so a server running in the test's own process keeps serving meanwhile.
 * @throws Error that says the compiler is missing (these tests must fail, not skip, without one), or with the
 * compiler's diagnostics.
 */
export async function buildCppClientProgram(source: string, name: string, extraFlags: readonly string[] = []): Promise<string> {
  try {
    await run(cxx, ['--version']);
  } catch (error) {
    throw new Error(
      `no C++ compiler: \`${cxx} --version\` failed (${(error as Error).message}). The C++ client tests need g++ ` +
        '(or CXX set to a C++17 compiler); install it, e.g. `apt-get install g++`.',
    );
  }
  const vendor = join(llamaCppDir(), 'vendor');
  if (!existsSync(join(vendor, 'nlohmann', 'json.hpp'))) {
    throw new Error(`nlohmann/json.hpp not found under ${vendor}: run \`npm run fetch:llama\` or set LLAMA_CPP_DIR`);
  }
  const output = join(mkdtempSync(join(tmpdir(), 'llama-dialog-cpp-')), name);
  const args = ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-O0', '-I', join(repoRoot, 'clients', 'cpp'), '-I', vendor];
  try {
    await run(cxx, [...args, ...extraFlags, join(repoRoot, source), '-o', output], { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`${cxx} could not compile ${source}:\n${stderr ?? (error as Error).message}`);
  }
  return output;
}

/** Runs a built program; resolves with its exit code and output whatever the exit code. */
export async function runProgram(
  path: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The timeout only keeps a hung client from hanging the suite; the tests assert on the output, never on time.
    execFile(path, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}
