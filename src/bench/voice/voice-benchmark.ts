/**
 * `bench --workload voice` (issue 21, item 6): spoken NPC turns on a real voice and a real chat model, timed from the
 * outside. Four parts, one session:
 * - speech: the same lines to two agents that differ only in delivery mode (`voice` vs `text`), in alternating
 *   order; first audio from the player's line and from the delta that closed the first sentence, underruns of a
 *   listener playing at real time, and the model's tokens/s with and without speech (greedy, so both agents write
 *   the same replies);
 * - real-time factor: synthesis time over audio time of each sentence, from the node's diagnostics, while the model
 *   was generating;
 * - cancel: a turn cancelled at its first audio; time to turnComplete and audio events after cancel();
 * - baked lines: CannedResponse → Speak on lines baked beforehand; first audio from the player's line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from '../../agent/session.js';
import type { Agent } from '../../agent/agent.js';
import { engineModelLoader } from '../../host/model-loader.js';
import type { SpeechReport } from '../../voice/speech-pipeline.js';
import { mean, median, percentile } from '../statistics.js';
import { VoiceTurnTimeline, type VoiceTurnFigures } from './voice-turn-timeline.js';
import { bakeLines, writeVoiceBake } from '../../voice/voice-bake.js';
import { loadSherpaVoice } from '../../voice/sherpa-voice.js';

export interface VoiceBenchmarkSettings {
  chatModelPath: string;
  voiceFolder: string;
  threads: number;
  /** Measured speech turns (after one warm-up turn). */
  turns: number;
  /** Cancelled turns and baked-line turns. */
  repeats: number;
  minSentenceChars: number;
}

export interface LatencySummary {
  samples: number;
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

export interface VoiceBenchmarkReport {
  tool: 'llama-dialog bench';
  kind: 'voice';
  workload: { name: 'voice'; fingerprint: string };
  environment: { device: string; backend: string; threads: number; cpu: string };
  settings: VoiceBenchmarkSettings;
  turns: (VoiceTurnFigures & { line: string; textTokensPerSecond: number; voiceTokensPerSecond: number })[];
  firstAudioFromLine: LatencySummary;
  firstAudioFromSentence: LatencySummary;
  realTimeFactor: { median: number; max: number; sentences: number };
  tokensPerSecond: { withSpeech: number; withoutSpeech: number; ratio: number };
  underruns: { turns: number; total: number; totalMs: number };
  cancel: LatencySummary & { audioAfterCancel: number };
  baked: LatencySummary & { synthesizedWhileBaked: number };
  /** `bench compare` rows. */
  strategies: { strategy: string; summary: Record<string, number> }[];
}

const SYSTEM_PROMPT =
  'You are Brannoc, the blacksmith of Harrowford, a gruff but kind old man. Answer the traveller in two or three full sentences.';
const PLAYER_LINES = [
  'Good morning! What are you working on today?',
  'How much would you want for a sword?',
  'Can you tell me about the river town?',
  'Have you seen any strangers pass through lately?',
  'What is the best thing you have ever forged?',
  'Is the road to the hills safe at night?',
  'Who taught you to work the forge?',
  'Do you have any work for a traveller like me?',
  'What do people here do for fun?',
  'Tell me about the silver from the hills.',
  'Where should I sleep tonight?',
  'What happened to your left hand?',
];
const BAKED_LINES = [
  'Welcome to my smithy, traveller.',
  'Mind the sparks, they bite.',
  'Come back when you have coin.',
  'The forge is hot today.',
];

function summarize(values: readonly number[]): LatencySummary {
  if (values.length === 0) return { samples: 0, medianMs: Number.NaN, p95Ms: Number.NaN, minMs: Number.NaN, maxMs: Number.NaN };
  return { samples: values.length, medianMs: median(values), p95Ms: percentile(values, 95), minMs: Math.min(...values), maxMs: Math.max(...values) };
}

function speakingGraph(settings: VoiceBenchmarkSettings) {
  return {
    start: 'answer',
    nodes: [
      {
        name: 'answer',
        type: 'GenerateAndSpeak',
        params: { systemPrompt: SYSTEM_PROMPT, contextSize: 2048, maxTokens: 80, temperature: 0, minSentenceChars: settings.minSentenceChars },
      },
    ],
  };
}

async function timedTurn(agent: Agent, line: string, minSentenceChars: number, onEvent?: (timeline: VoiceTurnTimeline, type: string) => void): Promise<VoiceTurnTimeline> {
  const timeline = new VoiceTurnTimeline(minSentenceChars);
  for await (const event of agent.sendMessage(line)) {
    timeline.record(event);
    onEvent?.(timeline, event.type);
  }
  return timeline;
}

/** Synthesis time / audio time of each sentence synthesized (not taken from the cache), from the nodes' diagnostics. */
function sentenceRealTimeFactors(diagnostics: unknown, sampleRate: number): number[] {
  const nodes = (diagnostics as { nodes?: { data?: { speech?: SpeechReport } }[] } | undefined)?.nodes ?? [];
  return nodes
    .flatMap((node) => node.data?.speech?.sentences ?? [])
    .filter((sentence) => !sentence.cached && sentence.samples > 0)
    .map((sentence) => sentence.synthesisMs / ((sentence.samples / sampleRate) * 1000));
}

export async function runVoiceBenchmark(settings: VoiceBenchmarkSettings, environment: VoiceBenchmarkReport['environment'], log: (line: string) => void): Promise<VoiceBenchmarkReport> {
  const session = new Session({
    loadModel: engineModelLoader,
    models: { chat: { path: settings.chatModelPath }, voice: { path: settings.voiceFolder, purpose: 'tts' } },
    contexts: 'own',
  }).create({ gameName: 'bench-voice' });
  const scratch = mkdtempSync(join(tmpdir(), 'llama-dialog-bench-voice-'));
  try {
    const agentOptions = { defaultModel: 'chat', engine: { threads: settings.threads }, enableDiagnostics: true, graph: speakingGraph(settings), voice: { model: 'voice' } };
    const speaking = await session.createAgent({ ...agentOptions, deliveryMode: 'voice' });
    const silent = await session.createAgent({ ...agentOptions, deliveryMode: 'text' });
    const lines = Array.from({ length: settings.turns + 1 }, (_, index) => PLAYER_LINES[index % PLAYER_LINES.length]!);
    const turns: VoiceBenchmarkReport['turns'] = [];
    const factors: number[] = [];
    for (const [index, line] of lines.entries()) {
      // Alternate which agent goes first, so a slow drift of the machine weighs on both alike.
      const speakFirst = index % 2 === 0;
      let spoken: VoiceTurnTimeline | undefined;
      let written: VoiceTurnTimeline | undefined;
      for (const speak of speakFirst ? [true, false] : [false, true]) {
        if (speak) spoken = await timedTurn(speaking, line, settings.minSentenceChars);
        else written = await timedTurn(silent, line, settings.minSentenceChars);
      }
      if (index === 0) continue; // warm-up: loads the voice's ORT session and the model's prompt prefix
      const figures = spoken!.figures();
      const text = written!.figures();
      const rate = (turn: VoiceTurnFigures): number => (turn.generationMs > 0 ? ((turn.deltas - 1) * 1000) / turn.generationMs : Number.NaN);
      turns.push({ ...figures, line, voiceTokensPerSecond: rate(figures), textTokensPerSecond: rate(text) });
      factors.push(...sentenceRealTimeFactors(spoken!.diagnostics, spoken!.sampleRate));
      log(`[bench] voice: turn ${index}/${settings.turns}: first audio ${figures.firstAudioFromLineMs?.toFixed(0)} ms from the line, ${figures.firstAudioFromSentenceMs?.toFixed(0)} ms from the sentence`);
    }
    await silent.destroy();

    log('[bench] voice: cancel at first audio');
    const cancelMs: number[] = [];
    let audioAfterCancel = 0;
    for (let round = 0; round < settings.repeats; round++) {
      let cancelledAt: number | null = null;
      let cancelling: Promise<void> | undefined;
      const timeline = await timedTurn(speaking, PLAYER_LINES[(round + 3) % PLAYER_LINES.length]!, settings.minSentenceChars, (turn, type) => {
        if (type === 'ttsAudio' && cancelledAt === null) {
          cancelledAt = turn.now();
          cancelling = speaking.cancel();
        } else if (type === 'ttsAudio') audioAfterCancel++;
      });
      await cancelling;
      if (cancelledAt !== null) cancelMs.push(timeline.figures().turnCompleteMs - cancelledAt);
    }
    await speaking.destroy();

    log('[bench] voice: baked lines');
    const bakeFile = join(scratch, 'lines.voicebake');
    const bakingVoice = await loadSherpaVoice(settings.voiceFolder, { threads: 1 });
    try {
      await writeVoiceBake(bakeFile, await bakeLines(bakingVoice, BAKED_LINES, { minSentenceChars: settings.minSentenceChars }));
    } finally {
      await bakingVoice.dispose();
    }
    const barks = await session.createAgent({
      bakedAudio: [bakeFile],
      defaultModel: 'chat',
      enableDiagnostics: true,
      voice: { model: 'voice' },
      graph: {
        start: 'line',
        nodes: [
          { name: 'line', type: 'CannedResponse', params: { strings: BAKED_LINES, strategy: 'roundRobin' }, exits: { default: 'say' } },
          { name: 'say', type: 'Speak', params: { minSentenceChars: settings.minSentenceChars } },
        ],
      },
    });
    const bakedMs: number[] = [];
    let synthesizedWhileBaked = 0;
    for (let round = 0; round < Math.max(settings.repeats, BAKED_LINES.length); round++) {
      const timeline = await timedTurn(barks, 'Hello there.', settings.minSentenceChars);
      const first = timeline.figures().firstAudioFromLineMs;
      if (first !== null) bakedMs.push(first);
      synthesizedWhileBaked += sentenceRealTimeFactors(timeline.diagnostics, timeline.sampleRate || 1).length;
    }
    await barks.destroy();

    const withSpeech = mean(turns.map((turn) => turn.voiceTokensPerSecond));
    const withoutSpeech = mean(turns.map((turn) => turn.textTokensPerSecond));
    const firstAudioFromLine = summarize(turns.flatMap((turn) => (turn.firstAudioFromLineMs === null ? [] : [turn.firstAudioFromLineMs])));
    const firstAudioFromSentence = summarize(turns.flatMap((turn) => (turn.firstAudioFromSentenceMs === null ? [] : [turn.firstAudioFromSentenceMs])));
    const cancel = { ...summarize(cancelMs), audioAfterCancel };
    const baked = { ...summarize(bakedMs), synthesizedWhileBaked };
    const realTimeFactor = { median: factors.length > 0 ? median(factors) : Number.NaN, max: factors.length > 0 ? Math.max(...factors) : Number.NaN, sentences: factors.length };
    const underruns = {
      turns: turns.filter((turn) => turn.underruns > 0).length,
      total: turns.reduce((total, turn) => total + turn.underruns, 0),
      totalMs: turns.reduce((total, turn) => total + turn.underrunMs, 0),
    };
    return {
      tool: 'llama-dialog bench',
      kind: 'voice',
      workload: { name: 'voice', fingerprint: `turns${settings.turns}-chars${settings.minSentenceChars}-t${settings.threads}` },
      environment,
      settings,
      turns,
      firstAudioFromLine,
      firstAudioFromSentence,
      realTimeFactor,
      tokensPerSecond: { withSpeech, withoutSpeech, ratio: withSpeech / withoutSpeech },
      underruns,
      cancel,
      baked,
      strategies: [
        {
          strategy: 'speech',
          summary: {
            firstAudioFromLineMedianMs: firstAudioFromLine.medianMs,
            firstAudioFromSentenceMedianMs: firstAudioFromSentence.medianMs,
            realTimeFactor: realTimeFactor.median,
            tokensPerSecond: withSpeech,
            underruns: underruns.total,
            cancelMedianMs: cancel.medianMs,
            bakedFirstAudioMedianMs: baked.medianMs,
          },
        },
        { strategy: 'text only', summary: { tokensPerSecond: withoutSpeech } },
      ],
    };
  } finally {
    await session.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
