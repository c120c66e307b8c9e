/**
 * The fuzz tier's two halves. A child script (children/*.fuzz-child.ts) runs fast-check properties against the real
 * addon and prints one JSON {@link FuzzSummary} as its last stdout line; the vitest file spawns it, so a native abort
 * is a crashed child with a signal, not a crashed test worker. Every call a property makes goes through
 * {@link FuzzRecorder.call}: it succeeds, or it throws a LlamaDialogError with a code of the ErrorCode table and
 * leaves the observed state (dialog export, context tokens, params) exactly as it was.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ErrorCode, LlamaDialogError } from '../../src/errors.js';

/** Runs of an ordinary property; `LLAMA_DIALOG_FUZZ_RUNS` raises (or lowers) every property's count in proportion. */
export const DEFAULT_FUZZ_RUNS = 150;

/** Same seed by default, so CI is reproducible; `LLAMA_DIALOG_FUZZ_SEED` explores other inputs. */
export const DEFAULT_FUZZ_SEED = 1215;

export interface FuzzViolation {
  property: string;
  /** What went wrong: an untyped error, an unknown code, changed state after a refusal. */
  problem: string;
  /** fast-check's rendering of the input, cut to 2,000 characters. */
  input?: string;
}

export interface FuzzSummary {
  /** Calls made into the public surface. */
  cases: number;
  /** Calls that succeeded. */
  succeeded: number;
  /** Typed refusals, by code. */
  codes: Record<string, number>;
  /** Typed refusals by call label and code ("tokenize 4010"), to see which call refused with what. */
  refusals: Record<string, number>;
  violations: FuzzViolation[];
  seed: number;
  properties: number;
  /** Inputs not passed on because they hit a native abort already reported (each child says which). */
  knownCrashesAvoided?: number;
}

const knownCodes = new Set<number>(Object.values(ErrorCode));

export function fuzzRuns(weight = 1): number {
  const raw = Number(process.env.LLAMA_DIALOG_FUZZ_RUNS ?? DEFAULT_FUZZ_RUNS);
  const base = Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_FUZZ_RUNS;
  return Math.max(1, Math.round(base * weight));
}

export function fuzzSeed(): number {
  const raw = Number(process.env.LLAMA_DIALOG_FUZZ_SEED ?? DEFAULT_FUZZ_SEED);
  return Number.isInteger(raw) ? raw : DEFAULT_FUZZ_SEED;
}

class PropertyViolation extends Error {}

/**
 * `LLAMA_DIALOG_FUZZ_TRACE=<file>`: every input and call is appended (synchronously) before it runs, so after a
 * native crash the file ends with the input that caused it.
 */
const traceFile = process.env.LLAMA_DIALOG_FUZZ_TRACE || undefined;

function traceInput(property: string, args: unknown): void {
  if (traceFile !== undefined) appendFileSync(traceFile, `${property}: ${renderInput(args, 20_000)}\n`);
}

/** Counts calls and refusals of one child; properties report through it. */
export class FuzzRecorder {
  readonly summary: FuzzSummary = { cases: 0, succeeded: 0, codes: {}, refusals: {}, violations: [], seed: fuzzSeed(), properties: 0 };

  /**
   * Makes one call. `observe` reads the state a refusal must not change (compared deep-equal before and after).
   * Returns the error when the call was refused, undefined when it succeeded. A violation throws, so fast-check
   * stops that property with the input as counterexample.
   */
  async call(label: string, operation: () => unknown, observe?: () => unknown): Promise<LlamaDialogError | undefined> {
    this.summary.cases += 1;
    if (traceFile !== undefined) appendFileSync(traceFile, `  call ${label}\n`);
    const before = observe?.();
    try {
      await operation();
      this.summary.succeeded += 1;
      return undefined;
    } catch (error) {
      if (!(error instanceof LlamaDialogError) || !knownCodes.has(error.code)) {
        const described = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
        throw new PropertyViolation(`${label}: untyped error ${described}`.slice(0, 2000));
      }
      this.summary.codes[error.code] = (this.summary.codes[error.code] ?? 0) + 1;
      const key = `${label} ${error.code}`;
      this.summary.refusals[key] = (this.summary.refusals[key] ?? 0) + 1;
      if (process.env.LLAMA_DIALOG_FUZZ_VERBOSE) process.stderr.write(`${key}: ${error.message.slice(0, 300)}\n`);
      if (observe !== undefined) {
        const after = observe();
        if (!isDeepStrictEqual(before, after)) {
          throw new PropertyViolation(`${label}: refused with ${error.errorName} (${error.message}) but changed the state`);
        }
      }
      return error;
    }
  }

  /** Runs one property (no shrinking: a violation is reported with the input that caused it). */
  async check<Ts extends [unknown, ...unknown[]]>(
    property: string,
    arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
    predicate: (...args: Ts) => Promise<void>,
    weight = 1,
  ): Promise<void> {
    this.summary.properties += 1;
    const details = await fc.check(
      fc.asyncProperty(...arbitraries, async (...args: Ts) => {
        traceInput(property, args);
        await predicate(...args);
      }),
      { numRuns: fuzzRuns(weight), seed: this.summary.seed, endOnFailure: true },
    );
    if (details.failed) {
      const error = details.errorInstance;
      this.summary.violations.push({
        property,
        problem: error instanceof Error ? error.message : String(error),
        input: details.counterexample ? renderInput(details.counterexample) : undefined,
      });
    }
  }

  /** A plain assertion of the child (the surface still works after the hostile calls). */
  expect(property: string, ok: boolean, problem: string): void {
    if (!ok) this.summary.violations.push({ property, problem });
  }

  /** Prints the summary as the last stdout line. */
  print(): void {
    process.stdout.write(`\n${JSON.stringify(this.summary)}\n`);
  }
}

/** Runs a child's properties, then prints its summary; an error outside the properties is a violation too. */
export async function runFuzzChild(body: (recorder: FuzzRecorder) => Promise<void>): Promise<void> {
  const recorder = new FuzzRecorder();
  try {
    await body(recorder);
  } catch (error) {
    recorder.summary.violations.push({
      property: '(child)',
      problem: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error),
    });
  }
  recorder.print();
  // Handles of models, contexts and servers must not keep the child alive: its verdict is in.
  process.exit(0);
}

/** fast-check's rendering of an input; a very deep one would overflow the stack, so it is cut. */
function renderInput(input: unknown, maxChars = 2000): string {
  try {
    return fc.stringify(input).slice(0, maxChars);
  } catch {
    return '(too deep to print)';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Hostile values.

/** Strings a caller should not send: lone surrogates, controls, NULs, RTL marks, emoji, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\uD800', '\uDFFF', '\u0000', '\u202E', '\uFEFF', '\uFFFD', '🙂', 'é', 'e\u0301', '<|eot_id|>', '<|begin_of_text|>', '{{', '}}', '{%', '\n'), maxLength: 30 }),
  fc.constantFrom('', ' ', '\uD83D', 'a\uDC00b', '\u0000'.repeat(64), 'x'.repeat(5000), '{{#each}}', '{{> partial}}', '__proto__', 'constructor'),
);

/** Numbers at and beyond every edge. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, -1, 1, 0.5, -0.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON),
  fc.integer({ min: -1000, max: 5000 }),
  fc.double(),
);

/** Nested objects deeper than anyone writes by hand. */
export const deepObject: fc.Arbitrary<unknown> = fc.integer({ min: 50, max: 3000 }).map((depth) => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { nested: value } : [value];
  return value;
});

/** Any value of the wrong kind: the JSON kinds, hostile strings and numbers, and what JSON cannot hold. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileNumber },
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 3, withBigInt: true, withNullPrototype: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true }) },
  { weight: 1, arbitrary: deepObject },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, false, Symbol('s'), () => 1, new Int32Array([1, 2]), Object.create(null)) },
);

// ---------------------------------------------------------------------------------------------------------------
// The vitest side.

export interface ChildOutcome {
  exit: number | null;
  signal: NodeJS.Signals | null;
  summary: FuzzSummary | undefined;
  stderr: string;
}

/** Spawns `children/<name>.fuzz-child.ts` under tsx with `args`; resolves once it has exited. */
export function runChild(name: string, args: readonly string[] = []): Promise<ChildOutcome> {
  const script = fileURLToPath(new URL(`./children/${name}.fuzz-child.ts`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (exit, signal) => {
      const last = stdout.trim().split('\n').pop();
      let summary: FuzzSummary | undefined;
      try {
        summary = last ? (JSON.parse(last) as FuzzSummary) : undefined;
      } catch {
        summary = undefined;
      }
      resolve({ exit, signal, summary, stderr: stderr.slice(-4000) });
    });
  });
}

/** One line for the test log: cases, refusals and the distinct codes, named. */
export function describeSummary(name: string, summary: FuzzSummary): string {
  const nameOf = new Map<number, string>(Object.entries(ErrorCode).map(([key, code]) => [code, key]));
  const codes = Object.entries(summary.codes)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, count]) => `${code} ${nameOf.get(Number(code)) ?? '?'} ×${count}`);
  return `[fuzz ${name}] seed ${summary.seed}: ${summary.cases} cases in ${summary.properties} properties, ${summary.succeeded} succeeded, ${codes.length} distinct codes: ${codes.join(', ')}`;
}

/**
 * Runs an ES module snippet under tsx in a child (cwd: the repository root, so `./src/...` imports work) and returns
 * its exit and the JSON of its last stdout line: a reproducer of a native crash fails its test, not the test worker.
 */
export function runSnippet(source: string): { status: number | null; signal: NodeJS.Signals | null; result: unknown; stderr: string } {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: root, encoding: 'utf8' });
  const last = child.stdout.trim().split('\n').pop();
  let result: unknown;
  try {
    result = last ? JSON.parse(last) : undefined;
  } catch {
    result = undefined;
  }
  return { status: child.status, signal: child.signal, result, stderr: child.stderr.slice(-2000) };
}
