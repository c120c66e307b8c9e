import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { readGgufFile } from '../gguf/gguf-reader.js';
import { elementCount } from '../gguf/gguf-types.js';
import type { NativeBackendInfo } from '../native/binding.js';
import type { BenchEnvironment } from './bench-result.js';
import type { BenchMachine } from './tavern-result.js';
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
  workload: Pick<Workload, 'threads' | 'contextSize'>;
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

/**
 * The machine a run was taken on, so results from different GPUs compare: backend and device from llama.cpp's system
 * info and backend list (the first GPU device; the CPU's model name on a CPU backend), the GPU's memory from
 * `nvidia-smi` on CUDA (null elsewhere or when it is missing), and the `gpuLayers` the model was loaded with.
 * @param options.gpuLayers as given to the model load; undefined = the engine's default.
 * @param options.vramBytes overrides the nvidia-smi lookup (tests).
 */
export function describeBenchMachine(options: {
  systemInfo: string;
  backends: readonly NativeBackendInfo[];
  gpuLayers?: number;
  vramBytes?: number | null;
}): BenchMachine {
  const backend = backendFromSystemInfo(options.systemInfo);
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const gpuDevice = options.backends.flatMap((entry) => entry.devices).find((device) => device.type.toLowerCase().includes('gpu'));
  const device = backend === 'cpu' ? cpu : (gpuDevice?.description || gpuDevice?.name || `${backend} device`);
  return {
    backend,
    device,
    vramBytes: options.vramBytes !== undefined ? options.vramBytes : backend === 'cuda' ? nvidiaVramBytes() : null,
    gpuLayers: options.gpuLayers ?? null,
    cpu,
    cpuCount: cpus().length,
    platform: `${process.platform}-${process.arch}`,
    node: process.version,
    llamaCpp: options.systemInfo,
  };
}

/** Total memory of the first NVIDIA GPU (bytes), or null when nvidia-smi is missing or says nothing usable. */
function nvidiaVramBytes(): number | null {
  try {
    const text = execFileSync('nvidia-smi', ['--query-gpu=memory.total', '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 5000 });
    const mebibytes = Number.parseFloat(text.split('\n')[0] ?? '');
    return Number.isFinite(mebibytes) ? mebibytes * 2 ** 20 : null;
  } catch {
    return null;
  }
}
