import type { z } from 'zod';

/** One line naming the first problem zod found, with its path (`nodes[2].params.maxTokens: ...`). */
export function describeFirstIssue(error: z.ZodError, pathPrefix = ''): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  let path = pathPrefix;
  for (const key of issue.path) {
    if (typeof key === 'number') path += `[${key}]`;
    else path += path ? `.${String(key)}` : String(key);
  }
  return path ? `${path}: ${issue.message}` : issue.message;
}
