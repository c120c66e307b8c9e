import { cpus, loadavg } from 'node:os';
import { readGgufFile } from '../gguf/gguf-reader.js';
import { elementCount } from '../gguf/gguf-types.js';
import type { BenchEnvironment } from './bench-result.js';
import type { Workload } from './workloads.js';

/** ggml backends a llama.cpp build may name in its system info, first match wins. */
const GPU_BACKENDS: readonly [marker: RegExp, backend: string][] = [
  [/CUDA/i, 'cuda'],
  [/Metal|MTL/, 'metal'],
  [/Vulkan/i, 'vulkan'],
  [/ROCm|HIP/, 'rocm'],
  [/SYCL/, 'sycl'],
];

/**
 * The backend llama.cpp runs on, from its system-info line (`llama_print_system_info`): a GPU backend when the
 * build has one, else `cpu`. Without system info: `cpu` (the package's default build).
 */
export function backendFromSystemInfo(systemInfo: string | null): string {
  if (systemInfo === null) return 'cpu';
  return GPU_BACKENDS.find(([marker]) => marker.test(systemInfo))?.[1] ?? 'cpu';
}

/**
 * Everything the report prints about where it ran. The model is described from its GGUF header (no load).
 * @param options.systemInfo llama.cpp's system-info line when the engine can give it.
 * @throws LlamaDialogError ModelLoadFailed when the model file is missing or not GGUF.
 */
export async function describeBenchEnvironment(options: {
  modelPath: string;
  workload: Workload;
  synthetic: boolean;
  systemInfo?: string | null;
}): Promise<BenchEnvironment> {
  const gguf = await readGgufFile(options.modelPath);
  const architecture = gguf.metadata.get('general.architecture');
  const processors = cpus();
  const backend = backendFromSystemInfo(options.systemInfo ?? null);
  return {
    backend,
    device: backend === 'cpu' ? (processors[0]?.model.trim() ?? 'unknown CPU') : `${backend} device`,
    threads: options.workload.threads,
    contextSize: options.workload.contextSize,
    model: {
      path: options.modelPath,
      architecture: architecture?.type === 'string' ? architecture.value : 'unknown',
      parameterCount: gguf.tensors.reduce((total, tensor) => total + elementCount(tensor.dims), 0),
      fileSize: gguf.fileSize,
      synthetic: options.synthetic,
    },
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpuCount: processors.length,
    loadAverageAtStart: loadavg()[0] ?? 0,
  };
}
