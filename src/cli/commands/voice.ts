import { join, resolve } from 'node:path';
import { z } from 'zod';
import { modelCacheDir } from '../../models/model-cache.js';
import { importPiperVoice } from '../../voice/piper-voice-import.js';
import { loadSherpaVoice } from '../../voice/sherpa-voice.js';
import { writeWav } from '../../voice/wav-file.js';
import { defineCommand, ExitCode } from '../command.js';
import { voiceBakeCommand } from './voice-bake.js';

const numberFlag = (what: string) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, `${what} must be a number`)
    .transform(Number);

export const voiceImportCommand = defineCommand({
  name: 'voice import',
  summary: 'turn a Piper voice (.onnx + .onnx.json) into a voice folder sherpa-onnx loads',
  help: `Usage: llama-dialog voice import <model.onnx> [--config <model.onnx.json>] [--out <folder>] [--espeak-data <dir>] [--name <name>]

Writes a voice folder: model.onnx (the Piper model with sherpa-onnx's metadata appended: model_type, comment,
language, voice, n_speakers, sample_rate, ...), tokens.txt (from the config's phoneme_id_map) and voice.json (rate,
speakers, inference scales, sha256 of the files, the licence from a MODEL_CARD beside the model). The folder is
checked as the loader checks it, then renamed into place.

espeak-ng data (GPL-3.0) is not copied into the folder: voices use one shared data dir, found in this order:
--espeak-data, Debian's espeak-ng-data package (/usr/lib/<arch>/espeak-ng-data, /usr/share/espeak-ng-data),
else extracted once from the npm package @echogarden/espeak-ng-emscripten into the model cache.

Options:
  --config <file>       the Piper config; default <model.onnx>.json
  --out <folder>        default <model cache>/voices/<model name>
  --espeak-data <dir>   espeak-ng data dir to use and record in voice.json
  --name <name>         name in voice.json; default the model file's name
  -h, --help            show this help`,
  flags: { config: { type: 'string' }, out: { type: 'string' }, 'espeak-data': { type: 'string' }, name: { type: 'string' } },
  positionals: 'models',
  schema: z.strictObject({
    models: z.array(z.string().min(1)).length(1, 'give exactly one Piper .onnx model'),
    config: z.string().min(1).optional(),
    out: z.string().min(1).optional(),
    'espeak-data': z.string().min(1).optional(),
    name: z.string().min(1).optional(),
  }),
  async run(options, io) {
    const model = resolve(options.models[0]!);
    const name = options.name ?? model.replace(/^.*[\\/]/, '').replace(/\.onnx$/i, '');
    const out = resolve(options.out ?? join(modelCacheDir(), 'voices', name));
    const voice = importPiperVoice({
      model,
      out,
      name,
      ...(options.config === undefined ? {} : { config: options.config }),
      ...(options['espeak-data'] === undefined ? {} : { espeakData: options['espeak-data'] }),
      onProgress: (line) => io.stderr(`voice import: ${line}\n`),
    });
    io.stdout(`${voice.folder}\n  ${voice.manifest.name}: ${voice.manifest.sampleRate} Hz, ${voice.manifest.speakers} speaker(s), ${voice.manifest.language} (espeak ${voice.manifest.espeakVoice})\n`);
    return ExitCode.Ok;
  },
});

export const voiceSayCommand = defineCommand({
  name: 'voice say',
  summary: 'speak a text with a voice folder into a WAV file',
  help: `Usage: llama-dialog voice say <voice-folder> "text" --out <file.wav> [--speed S] [--speaker N] [--threads T]

Synthesizes the text with sherpa-onnx (optional peer dependency sherpa-onnx-node) and writes a 16-bit mono WAV at
the voice's rate. Prints the audio duration, the synthesis time and the real-time factor (synthesis ÷ duration).

Options:
  --out <file>      the WAV to write
  --speed <s>       0.1–3.0, default 1 (2 = twice as fast, pitch kept)
  --speaker <n>     speaker of a multi-speaker voice, default 0
  --threads <t>     ONNX Runtime threads, default 1
  -h, --help        show this help`,
  flags: { out: { type: 'string' }, speed: { type: 'string' }, speaker: { type: 'string' }, threads: { type: 'string' } },
  positionals: 'words',
  schema: z.strictObject({
    words: z.array(z.string()).length(2, 'give the voice folder and the text (quoted)'),
    out: z.string().min(1),
    speed: numberFlag('--speed').default(1),
    speaker: numberFlag('--speaker').default(0),
    threads: numberFlag('--threads').default(1),
  }),
  async run(options, io) {
    const [folder, text] = options.words as [string, string];
    const voice = await loadSherpaVoice(resolve(folder), { threads: options.threads });
    try {
      const started = performance.now();
      const pcm = await voice.synthesize({ text, speakerId: options.speaker, speed: options.speed });
      const synthesisMs = performance.now() - started;
      const out = resolve(options.out);
      writeWav(out, pcm, voice.format.sampleRate);
      const durationMs = (pcm.length / voice.format.sampleRate) * 1000;
      io.stdout(
        `${out}\n  duration ${(durationMs / 1000).toFixed(2)} s, synthesis ${synthesisMs.toFixed(0)} ms, RTF ${(durationMs > 0 ? synthesisMs / durationMs : 0).toFixed(3)}, ${voice.format.sampleRate} Hz\n`,
      );
    } finally {
      await voice.dispose();
    }
    return ExitCode.Ok;
  },
});

export const voiceCommand = defineCommand({
  name: 'voice',
  summary: 'voices for speaking agents: import a Piper voice, say a line into a WAV, bake lines',
  help: `Usage: llama-dialog voice <import|say|bake> …

  voice import <model.onnx> [--config …] [--out …] [--espeak-data …]   make a voice folder from a Piper voice
  voice say <voice-folder> "text" --out file.wav [--speed S] [--speaker N]   speak a line into a WAV
  voice bake <voice-folder> <lines.txt|lines.json> --out file.voicebake   pre-synthesize lines for the audio cache

Run llama-dialog voice <subcommand> --help for each one's options. docs/VOICE.md has the details and licences.`,
  flags: {},
  positionals: 'words',
  subcommands: [voiceImportCommand, voiceSayCommand, voiceBakeCommand()],
  schema: z.strictObject({ words: z.array(z.string()) }),
  async run(options, io) {
    // Reached only when no subcommand matched.
    const word = options.words[0];
    io.stderr(`llama-dialog voice: ${word === undefined ? 'missing subcommand' : `unknown subcommand "${word}"`}\n\n${voiceCommand.help}\n`);
    return ExitCode.Usage;
  },
});
