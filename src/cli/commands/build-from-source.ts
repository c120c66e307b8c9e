import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../../native/loader.js';
import { defineCommand, ExitCode } from '../command.js';

export const buildFromSourceCommand = defineCommand({
  name: 'build-from-source',
  summary: 'compile the native addon and llama.cpp on this machine (instead of the prebuilt package)',
  help: `Usage: llama-dialog build-from-source [--cuda] [--vulkan] [--metal] [--portable] [--cmake-arg -DNAME=VALUE ...]

Builds llama.cpp and the addon into <llama-dialog>/build/Release (cmake-js; a few minutes on 2 cores,
incremental afterwards). The loader prefers this build over the prebuilt platform package; delete the
build folder to go back. Needs cmake, a C++17 compiler, git, and the build tools:
  npm install --no-save cmake-js@8.0.0 node-addon-api@8.9.2

The llama.cpp source is LLAMA_CPP_DIR when set, else the pinned release's git bundle when
node-llama-cpp@3.21.1 is installed, else a git clone of the pinned commit (needs the network).

Options:
  --cuda              add the CUDA backend (GGML_CUDA=ON; needs the CUDA toolkit)
  --vulkan            add the Vulkan backend (GGML_VULKAN=ON; needs glslc and the Vulkan headers)
  --metal             force the Metal backend on (on by default on macOS)
  --portable          no -march=native and no x86 extensions beyond the x86-64 baseline
  --cmake-arg <arg>   any CMake definition, e.g. --cmake-arg -DGGML_CUDA_FA_ALL_QUANTS=ON (repeatable)
  -h, --help          show this help`,
  flags: {
    cuda: { type: 'boolean' },
    vulkan: { type: 'boolean' },
    metal: { type: 'boolean' },
    portable: { type: 'boolean' },
    'cmake-arg': { type: 'string', multiple: true },
  },
  schema: z
    .object({
      cuda: z.boolean().default(false),
      vulkan: z.boolean().default(false),
      metal: z.boolean().default(false),
      portable: z.boolean().default(false),
      'cmake-arg': z.array(z.string().regex(/^-D[^=]+=.*$/, 'a CMake definition looks like -DNAME=VALUE')).default([]),
    })
    .strict(),
  async run(options, io) {
    const root = packageRoot();
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (options.cuda) env.LLAMA_DIALOG_CUDA = '1';
    if (options.vulkan) env.LLAMA_DIALOG_VULKAN = '1';
    if (options.metal) env.LLAMA_DIALOG_METAL = '1';
    if (options.portable) env.LLAMA_DIALOG_PORTABLE = '1';
    if (options['cmake-arg'].length > 0) {
      env.LLAMA_DIALOG_CMAKE_ARGS = [env.LLAMA_DIALOG_CMAKE_ARGS ?? '', ...options['cmake-arg']].join(' ').trim();
    }
    io.stderr(`building the native addon in ${join(root, 'build')} (this takes minutes; progress follows)\n`);
    // The build prints its own progress on the inherited streams; a long compile must stay visible.
    const child = spawn(process.execPath, [join(root, 'scripts', 'build-native.mjs')], { cwd: root, env, stdio: 'inherit' });
    const code = await new Promise<number | null>((resolveExit, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode) => resolveExit(exitCode));
    });
    if (code !== 0) {
      io.stderr(`build-from-source failed (exit ${code}); the messages above say why\n`);
      return ExitCode.Failed;
    }
    io.stdout(`built ${join(root, 'build', 'Release', 'llama_dialog.node')}; llama-dialog now loads it before any prebuilt package\n`);
    return ExitCode.Ok;
  },
});
