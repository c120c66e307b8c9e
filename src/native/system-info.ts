/** What the package runs on: which binary, which CPU variant, which GPU backends and why not the others. */
import { loadNativeAddon, nativeLoadReport, type NativeBinarySource } from './loader.js';
import type { NativeBackendInfo } from './binding.js';
import type { GpuBackendKind } from './platform-id.js';
import { platformId } from './platform-id.js';

export interface SystemInfo {
  /** `linux-x64-gnu`, `darwin-arm64`, … */
  platform: string;
  /** The addon in use and where it came from (override, local source build, or platform package). */
  binary: { source: NativeBinarySource; path: string; package?: string };
  /** True for prebuilt packages, whose backends are modules loaded at run time. */
  dynamicBackends: boolean;
  /**
   * The CPU backend variant ggml chose by CPUID (e.g. `x64`, `haswell`, `zen4`) from a prebuilt package;
   * `native` for a source build, which is compiled for the machine that built it.
   */
  cpuVariant: string;
  /** Per GPU kind, `loaded …`, or why not: `not installed …`, `unavailable: libvulkan.so.1 not found …`. */
  gpu: Record<GpuBackendKind, string>;
  /** The registered backends with their devices and the CPU's instruction-set features. */
  backends: NativeBackendInfo[];
  /** llama.cpp's own system-info line. */
  llamaCpp: string;
}

/**
 * Describes the loaded native binary and its backends (loads the addon on first use).
 * @throws LlamaDialogError NativeBinaryMissing when no binary can be found (the message says how to get one).
 */
export function systemInfo(): SystemInfo {
  const addon = loadNativeAddon();
  const { location, backends } = nativeLoadReport();
  const cpuModule = backends.loaded.find((entry) => entry.backend === 'CPU');
  const cpuVariant = backends.dynamic
    ? (/ggml-cpu-([^/\\]+?)\.(so|dll|dylib)$/.exec(cpuModule?.path ?? '')?.[1] ?? (cpuModule ? 'default' : 'none loaded'))
    : 'native';
  return {
    platform: platformId(),
    binary: { source: location.source, path: location.file, ...(location.packageName ? { package: location.packageName } : {}) },
    dynamicBackends: backends.dynamic,
    cpuVariant,
    gpu: backends.gpu,
    backends: addon.listBackends(),
    llamaCpp: addon.systemInfo(),
  };
}
