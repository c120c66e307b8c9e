/**
 * The name of this machine's prebuilt platform package, as SPEC §2.5 splits them: `<os>-<arch>` plus,
 * on Linux, the C library (`gnu` for glibc, `musl`), e.g. `linux-x64-gnu` → `@llama-dialog/linux-x64-gnu`.
 */

/** glibc's version when this process runs on glibc; undefined on musl and off Linux. */
export function glibcVersion(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime;
}

/** glibc or musl on Linux (what prebuilt binaries are split by); `n/a` elsewhere. */
export function describeLibc(): string {
  if (process.platform !== 'linux') return 'n/a';
  const glibc = glibcVersion();
  return glibc ? `glibc ${glibc}` : 'musl';
}

/** `linux-x64-gnu`, `linux-arm64-gnu`, `linux-x64-musl`, `darwin-arm64`, `win32-x64`, … */
export function platformId(): string {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return base;
  return `${base}-${glibcVersion() ? 'gnu' : 'musl'}`;
}

/** The npm package that holds this platform's prebuilt addon. */
export function platformPackageName(): string {
  return `@llama-dialog/${platformId()}`;
}

/** The opt-in GPU backend packages this platform may have: `@llama-dialog/<os>-<arch>-<kind>`. */
export const GPU_BACKEND_KINDS = ['cuda', 'vulkan'] as const;
export type GpuBackendKind = (typeof GPU_BACKEND_KINDS)[number];

export function gpuPackageName(kind: GpuBackendKind): string {
  return `@llama-dialog/${process.platform}-${process.arch}-${kind}`;
}
