import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { z } from 'zod';
import { LlamaDialogError } from '../../errors.js';
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED, loadSherpaVoice } from '../../voice/sherpa-voice.js';
import type { VoiceLoader } from '../../voice/tts-voice.js';
import { bakeLines, writeVoiceBake } from '../../voice/voice-bake.js';
import { defineCommand, ExitCode, type CliIo, type ExitCodeValue } from '../command.js';

const number = (schema: z.ZodNumber) => z.string().regex(/^\d+(\.\d+)?$/, 'expected a number').transform(Number).pipe(schema);

/** `llama-dialog voice bake`, with the voice loader injectable (tests, other engines). */
export function voiceBakeCommand(loadVoice: VoiceLoader = loadSherpaVoice) {
  return defineCommand({
    name: 'voice bake',
    summary: 'pre-synthesize lines (barks, canned replies) into a .voicebake file the audio cache loads',
    help: `Usage: llama-dialog voice bake <voice-folder> <lines.txt | lines.json> --out <file.voicebake> [options]

Synthesizes every line with the voice and writes the audio, sentence by sentence, into one file.
Load it with createAgent({ bakedAudio: [file] }) or session.loadBakedAudio(file, { voice }): a baked
sentence is then spoken with no synthesis. A bake is refused for any voice but the one it was made with.
lines.txt: one line per line (blank lines skipped); lines.json: an array of strings.

Options:
  --out <file>                 output file
  --speaker-id <n>             speaker of a multi-speaker voice (default 0)
  --speed <x>                  0.1–3.0 (default 1); must match the agent's voice to hit
  --min-sentence-chars <n>     sentence cutting, as the speaking nodes' param (default 12)
  -h, --help                   show this help`,
    flags: {
      out: { type: 'string' },
      'speaker-id': { type: 'string' },
      speed: { type: 'string' },
      'min-sentence-chars': { type: 'string' },
    },
    positionals: 'sources',
    schema: z
      .object({
        sources: z.array(z.string().min(1)).length(2, 'give the voice folder and the lines file'),
        out: z.string().min(1),
        'speaker-id': number(z.number().int().min(0)).default(0),
        speed: number(z.number().min(MIN_SPEECH_SPEED).max(MAX_SPEECH_SPEED)).default(1),
        'min-sentence-chars': number(z.number().int().min(1).max(1000)).default(12),
      })
      .strict(),
    async run(options, io) {
      const [folder, linesFile] = options.sources as [string, string];
      const lines = await readLines(resolve(linesFile));
      const voice = await loadVoice(resolve(folder), { threads: 1 });
      try {
        if (options['speaker-id'] >= voice.speakers) {
          throw new LlamaDialogError('InvalidArgument', `--speaker-id ${options['speaker-id']}: the voice has ${voice.speakers} speaker(s)`);
        }
        const bake = await bakeLines(voice, lines, {
          speakerId: options['speaker-id'],
          speed: options.speed,
          minSentenceChars: options['min-sentence-chars'],
        });
        const out = resolve(options.out);
        await writeVoiceBake(out, bake);
        const samples = bake.clips.reduce((sum, clip) => sum + clip.pcm.length, 0);
        io.stdout(`${out}\n  ${lines.length} lines, ${bake.clips.length} sentences, ${(samples / bake.format.sampleRate).toFixed(1)} s of audio at ${bake.format.sampleRate} Hz (voice ${bake.voiceId})\n`);
        return ExitCode.Ok;
      } finally {
        await voice.dispose();
      }
    },
  });
}

/**
 * Runs `llama-dialog voice bake <args>` alone, with the voice loader injectable (tests; the CLI reaches the same
 * command as a subcommand of `voice`).
 * @returns the exit code: 0 done, 1 failed (bad voice, synthesis error), 2 bad command line.
 */
export async function runVoiceBake(args: readonly string[], io: CliIo, loadVoice: VoiceLoader = loadSherpaVoice): Promise<ExitCodeValue> {
  // Imported here: run.js imports the command list, which holds this command (a static import would be a cycle).
  const { runCli } = await import('../run.js');
  const command = voiceBakeCommand(loadVoice);
  return runCli([command.name, ...args], io, [command]);
}

async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  if (extname(path).toLowerCase() === '.json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new LlamaDialogError('InvalidArgument', `${path}: not JSON (${(error as Error).message})`);
    }
    if (!Array.isArray(parsed) || !parsed.every((line) => typeof line === 'string')) {
      throw new LlamaDialogError('InvalidArgument', `${path}: expected a JSON array of strings`);
    }
    return parsed.filter((line) => line.trim().length > 0);
  }
  return text.split(/\r?\n/).filter((line) => line.trim().length > 0);
}
