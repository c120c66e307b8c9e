import type { ParseArgsConfig } from 'node:util';
import type { z } from 'zod';

/** Where a command writes; tests pass string collectors, the real CLI passes process streams. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stderr is a terminal (progress may redraw one line instead of printing many). */
  stderrIsTty: boolean;
  /** Where interactive commands (chat) read lines; default process.stdin. Tests pass a scripted stream. */
  stdin?: NodeJS.ReadableStream;
}

/** Exit codes of the CLI: 0 success, 1 the command failed, 2 the command line was wrong. */
export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * One `llama-dialog <name>` command, in one file under src/cli/commands. The CLI parses flags with
 * `flags` (node:util parseArgs), validates the resulting object with `schema`, then calls `run`.
 */
export interface CliCommand<Schema extends z.ZodType = z.ZodType> {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Full `--help` text. */
  help: string;
  /** Flag declarations (all values arrive as strings or booleans; `schema` converts them). */
  flags: NonNullable<ParseArgsConfig['options']>;
  /** When set, arguments that are not flags are allowed and reach `schema` as a string array under this key. */
  positionals?: string;
  /**
   * Commands reached as `llama-dialog <name> <word> …` (e.g. `bench compare`); each one's `name` is the whole
   * phrase (`bench compare`), and it parses its own flags.
   */
  subcommands?: readonly CliCommand[];
  schema: Schema;
  run(options: z.output<Schema>, io: CliIo): Promise<ExitCodeValue>;
}

/** Keeps the link between a command's schema and its `run` parameter type at the definition site. */
export function defineCommand<Schema extends z.ZodType>(command: CliCommand<Schema>): CliCommand<Schema> {
  return command;
}
