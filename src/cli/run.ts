import { parseArgs } from 'node:util';
import { isLlamaDialogError, LlamaDialogError } from '../errors.js';
import { ExitCode, type CliCommand, type CliIo, type ExitCodeValue } from './command.js';
import { describeIssue } from '../util/validation.js';
import { commands as allCommands } from './commands/index.js';

const USAGE_HEADER = 'Usage: llama-dialog <command> [options]   (llama-dialog <command> --help for its options)';

/** The top-level help: usage line and one line per command. */
export function generalHelp(commands: readonly CliCommand[] = allCommands): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [USAGE_HEADER, '', 'Commands:', ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`)].join('\n');
}

/**
 * Runs `llama-dialog` with `argv` (without node and script paths) and returns the exit code:
 * 0 success, 1 the command failed (message on stderr), 2 unknown command or invalid options.
 * Never throws for user errors; unexpected errors are reported with their stack and give 1.
 */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly CliCommand[] = allCommands): Promise<ExitCodeValue> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(`${generalHelp(commands)}\n`);
    return name === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (command === undefined) {
    io.stderr(`llama-dialog: unknown command "${name}"\n\n${generalHelp(commands)}\n`);
    return ExitCode.Usage;
  }
  const subcommand = command.subcommands?.find((candidate) => candidate.name === `${command.name} ${rest[0] ?? ''}`);
  return subcommand ? runCommand(subcommand, rest.slice(1), io) : runCommand(command, rest, io);
}

async function runCommand(command: CliCommand, rest: readonly string[], io: CliIo): Promise<ExitCodeValue> {
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`${command.help}\n`);
    return ExitCode.Ok;
  }

  let options: unknown;
  try {
    options = parseCommandLine(command, rest);
  } catch (error) {
    io.stderr(`llama-dialog ${command.name}: ${(error as Error).message}\n(see llama-dialog ${command.name} --help)\n`);
    return ExitCode.Usage;
  }

  try {
    return await command.run(options, io);
  } catch (error) {
    if (isLlamaDialogError(error)) {
      io.stderr(`llama-dialog ${command.name}: ${error.message}\n`);
      return error.errorName === 'InvalidArgument' ? ExitCode.Usage : ExitCode.Failed;
    }
    if (isSystemError(error)) {
      // ENOENT, EACCES, ENOSPC...: the message names the path and the cause; a stack adds nothing.
      io.stderr(`llama-dialog ${command.name}: ${error.message}\n`);
      return ExitCode.Failed;
    }
    io.stderr(`llama-dialog ${command.name}: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    return ExitCode.Failed;
  }
}

/**
 * Flags → validated options object.
 * @throws LlamaDialogError `InvalidArgument` for unknown flags, missing values, stray positionals, or
 *   values the command's schema rejects (the ZodError is the cause).
 */
export function parseCommandLine(command: CliCommand, args: readonly string[]): unknown {
  let values: Record<string, unknown>;
  try {
    const parsed = parseArgs({ args: [...args], options: command.flags, strict: true, allowPositionals: command.positionals !== undefined });
    values = command.positionals === undefined ? parsed.values : { ...parsed.values, [command.positionals]: parsed.positionals };
  } catch (error) {
    // parseArgs messages are already specific ("Unknown option '--x'"); keep them, drop the error type.
    throw new LlamaDialogError('InvalidArgument', (error as Error).message, { cause: error });
  }
  const parsed = command.schema.safeParse({ ...values });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => describeIssue(issue, { prefix: '--', indexes: 'dots', root: 'options' }));
    throw new LlamaDialogError('InvalidArgument', problems.join('; '), { cause: parsed.error });
  }
  return parsed.data;
}

function isSystemError(error: unknown): error is Error & { code: string } {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}
