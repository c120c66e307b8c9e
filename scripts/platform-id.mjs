// Build-time platform facts for scripts/prebuild.mjs. The platform id itself comes from the runtime's
// own definition (dist/native/platform-id.js, built by `npm run build:ts`), so the packages built here
// carry exactly the names the loader looks for.
import { platformId } from '../dist/native/platform-id.js';

export function hostPlatformId() {
  return platformId();
}

// ggml's x86 CPU variants (ggml/src/CMakeLists.txt, GGML_CPU_ALL_VARIANTS) with the /proc/cpuinfo flags
// their features need, in ggml's own score order (ggml-cpu/arch/x86/cpu-feats.cpp: later features weigh more).
const FEATURE_FLAGS = {
  SSE42: ['sse4_2'],
  AVX: ['avx'],
  F16C: ['f16c'],
  FMA: ['fma'],
  AVX2: ['avx2'],
  BMI2: ['bmi2'],
  AVX_VNNI: ['avx_vnni'],
  AVX512: ['avx512f', 'avx512cd', 'avx512vl', 'avx512dq', 'avx512bw'],
  AVX512_VBMI: ['avx512vbmi'],
  AVX512_BF16: ['avx512_bf16'],
  AVX512_VNNI: ['avx512_vnni'],
  AMX_INT8: ['amx_int8'],
  AMX_TILE: ['amx_tile'],
};
const SCORE = { FMA: 1, F16C: 2, SSE42: 4, BMI2: 8, AVX: 16, AVX2: 32, AVX_VNNI: 64, AVX512: 128, AVX512_VBMI: 256, AVX512_BF16: 512, AVX512_VNNI: 1024, AMX_INT8: 2048 };
const X86_VARIANTS = {
  x64: [],
  sse42: ['SSE42'],
  sandybridge: ['SSE42', 'AVX'],
  ivybridge: ['SSE42', 'AVX', 'F16C'],
  piledriver: ['SSE42', 'AVX', 'F16C', 'FMA'],
  haswell: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2'],
  skylakex: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512'],
  cannonlake: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VBMI'],
  cascadelake: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VNNI'],
  icelake: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VBMI', 'AVX512_VNNI'],
  cooperlake: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VNNI', 'AVX512_BF16'],
  zen4: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VBMI', 'AVX512_VNNI', 'AVX512_BF16'],
  alderlake: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX_VNNI'],
  sapphirerapids: ['SSE42', 'AVX', 'F16C', 'FMA', 'AVX2', 'BMI2', 'AVX512', 'AVX512_VBMI', 'AVX512_VNNI', 'AVX512_BF16', 'AMX_TILE', 'AMX_INT8'],
};

/**
 * The x86-64 baseline and the variant ggml will pick on the CPU that `cpuinfo` (/proc/cpuinfo) describes:
 * `['x64', best]`, or `['x64']` when nothing beats the baseline.
 */
export function x86VariantsFor(cpuinfo) {
  if (process.arch !== 'x64') throw new Error(`--variants host knows x86-64 only (this is ${process.arch}); build all variants`);
  const flags = new Set((/^flags\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? '').split(/\s+/));
  let best = 'x64';
  let bestScore = 1;
  for (const [name, features] of Object.entries(X86_VARIANTS)) {
    if (!features.every((f) => FEATURE_FLAGS[f].every((flag) => flags.has(flag)))) continue;
    const score = 1 + features.reduce((sum, f) => sum + (SCORE[f] ?? 0), 0);
    if (score > bestScore) {
      best = name;
      bestScore = score;
    }
  }
  return best === 'x64' ? ['x64'] : ['x64', best];
}
