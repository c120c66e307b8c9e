import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/run.js';

/** Runs the CLI in process with its output captured (no terminal): the exit code and what it printed. */
export async function runCapturedCli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), stderrIsTty: false };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
