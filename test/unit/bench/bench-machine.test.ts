import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import { describeBenchMachine } from '../../../src/bench/bench-environment.js';

const cpuBackend = { name: 'CPU', devices: [{ name: 'CPU', description: 'AMD EPYC', type: 'cpu' }], features: {} };
const cudaBackend = { name: 'CUDA', devices: [{ name: 'CUDA0', description: 'NVIDIA H200', type: 'gpu' }], features: {} };

describe('describeBenchMachine', () => {
  it('names the GPU, its memory and the offloaded layers on a GPU backend', () => {
    const machine = describeBenchMachine({
      systemInfo: 'CUDA : ARCHS = 900 | CPU : AVX2 = 1',
      backends: [cpuBackend, cudaBackend],
      gpuLayers: 99,
      vramBytes: 141 * 2 ** 30,
    });
    expect(machine).toMatchObject({ backend: 'cuda', device: 'NVIDIA H200', vramBytes: 141 * 2 ** 30, gpuLayers: 99, cpuCount: cpus().length });
    expect(machine.llamaCpp).toContain('CUDA');
  });

  it('names the CPU on a CPU backend, with no VRAM and the engine default for gpuLayers', () => {
    const machine = describeBenchMachine({ systemInfo: 'CPU : AVX2 = 1', backends: [cpuBackend] });
    expect(machine).toMatchObject({ backend: 'cpu', device: cpus()[0]?.model.trim(), vramBytes: null, gpuLayers: null });
  });
});
