import type { z } from 'zod';
import { LlamaDialogError, type ErrorName } from '../errors.js';

/** How an issue's path is written: `nodes[2].params` (brackets) or `nodes.2.params` (dots, also flags). */
export interface IssuePathStyle {
  /** Written before the path (e.g. `params`, or `--` for a flag); alone when the path is empty and no `root`. */
  prefix?: string;
  /** Array indexes as `[2]` (default) or as `.2`. */
  indexes?: 'brackets' | 'dots';
  /** Written when the path and prefix are both empty (default: nothing). */
  root?: string;
}

/** The path of one zod issue, in the caller's style. */
export function issuePath(path: readonly PropertyKey[], style: IssuePathStyle = {}): string {
  if (path.length === 0) return style.root ?? style.prefix ?? '';
  let written = style.prefix ?? '';
  for (const key of path) {
    if (typeof key === 'number' && (style.indexes ?? 'brackets') === 'brackets') written += `[${key}]`;
    // After a word (`params`, `nodes[2]`) a dot; after punctuation (`--`) or nothing, the key directly.
    else written += /[\w\]]$/.test(written) ? `.${String(key)}` : String(key);
  }
  return written;
}

/** One issue as `path: message` (just the message when there is no path). */
export function describeIssue(issue: z.core.$ZodIssue, style: IssuePathStyle = {}): string {
  const path = issuePath(issue.path, style);
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** One line naming the first problem zod found, with its path (`nodes[2].params.maxTokens: ...`). */
export function describeFirstIssue(error: z.ZodError, pathPrefix = '', style: Omit<IssuePathStyle, 'prefix'> = {}): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  return describeIssue(issue, { ...style, prefix: pathPrefix });
}

/**
 * Parses `value` with `schema`, or throws the package's typed error: `message` turns the failure into the text,
 * and the ZodError is kept as the cause (CONVENTIONS 9).
 */
export function parseOrThrow<T>(
  schema: z.ZodType<T>,
  value: unknown,
  code: ErrorName,
  message: (error: z.ZodError) => string,
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new LlamaDialogError(code, message(parsed.error), { cause: parsed.error });
}
