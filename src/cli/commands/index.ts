import type { CliCommand } from '../command.js';
import { benchCommand } from './bench.js';
import { buildFromSourceCommand } from './build-from-source.js';
import { chatCommand } from './chat.js';
import { convertEmbedderCommand } from './convert-embedder.js';
import { inspectCommand } from './inspect.js';
import { pullCommand } from './pull.js';
import { serveCommand } from './serve.js';
import { synthModelCommand } from './synth-model.js';
import { voiceCommand } from './voice.js';

/** Every command, in the order `llama-dialog --help` lists them. A new command is one file plus one line here. */
export const commands: readonly CliCommand[] = [synthModelCommand, benchCommand, chatCommand, inspectCommand, pullCommand, buildFromSourceCommand, serveCommand, convertEmbedderCommand, voiceCommand];
