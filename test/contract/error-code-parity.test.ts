// The addon rejects with a numeric code and a name (native/errors.h, native/errors.cpp); the TS side rebuilds a
// LlamaDialogError from the number (src/errors.ts). The two tables are written by hand in two languages, so this test
// reads the C++ source text (no build needed) and checks that every native code means the same thing on both sides.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, LlamaDialogError, type ErrorName } from '../../src/errors.js';
import { repoRoot } from '../helpers/llama-cpp.js';

const header = readFileSync(join(repoRoot, 'native', 'errors.h'), 'utf8');
const source = readFileSync(join(repoRoot, 'native', 'errors.cpp'), 'utf8');

/** The entries of `enum class ErrorCode`, in declaration order. */
function nativeEnum(): { name: string; code: number }[] {
  const body = /enum class ErrorCode\s*:\s*\w+\s*\{([^}]*)\}/.exec(header)?.[1];
  if (body === undefined) throw new Error('native/errors.h: no `enum class ErrorCode { ... }` found');
  return [...body.matchAll(/(\w+)\s*=\s*(\d+)/g)].map((match) => ({ name: match[1] as string, code: Number(match[2]) }));
}

/** `case ErrorCode::X: return "Y";` of ErrorCodeName, as [X, Y] pairs. */
function nativeNames(): [string, string][] {
  return [...source.matchAll(/case\s+ErrorCode::(\w+)\s*:\s*return\s+"([^"]*)"/g)].map((match) => [match[1] as string, match[2] as string]);
}

describe('error code parity between native/errors.h and src/errors.ts', () => {
  const entries = nativeEnum();

  it('finds the native table (the parser still understands the C++ source)', () => {
    expect(entries.length).toBeGreaterThanOrEqual(10);
    expect(entries).toContainEqual({ name: 'ContextOverflow', code: 4004 });
  });

  it('every native code has the same name and number in the TS table', () => {
    const mismatches = entries.filter(({ name, code }) => (ErrorCode as Record<string, number>)[name] !== code);
    expect(mismatches).toEqual([]);
  });

  it('a native rejection rebuilds into the LlamaDialogError of the same name', () => {
    for (const { name, code } of entries) {
      expect(LlamaDialogError.fromCode(code, 'from native')).toMatchObject({ errorName: name as ErrorName, code });
    }
  });

  it('native codes and names are each used once', () => {
    expect(new Set(entries.map((entry) => entry.code)).size).toBe(entries.length);
    expect(new Set(entries.map((entry) => entry.name)).size).toBe(entries.length);
    const tsCodes = Object.values(ErrorCode);
    expect(new Set(tsCodes).size).toBe(tsCodes.length);
  });

  it('ErrorCodeName (the `errorName` on a native error) names every code by its enum name', () => {
    const names = nativeNames();
    expect(names.map(([enumName]) => enumName).sort()).toEqual(entries.map((entry) => entry.name).sort());
    for (const [enumName, text] of names) expect(text).toBe(enumName);
  });
});
