#!/usr/bin/env node
// The `llama-dialog` executable: all logic lives in run.ts so that tests can drive it in-process.
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTty: process.stderr.isTTY === true,
});
