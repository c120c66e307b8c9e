/**
 * `bench --workload voice` (issue 21, item 6): spoken NPC turns on a real voice and a real chat model, timed from the
 * outside. Four parts, one session:
 * - speech: the same lines to three agents with the same graph, in rotating order: speaking with the default
 *   playback pacing, speaking with eager pacing (every sentence synthesized as soon as it is cut), and delivery mode
 *   `text`. First audio from the player's line, from the delta that closed the first speech segment and from the one
 *   that closed the first sentence; underruns of a listener playing at real time; the model's tokens/s in each case
 *   (greedy, so all three write the same replies);
 * - real-time factor: synthesis time over audio time of the eager agent's sentences (all synthesized while the model
 *   was generating), from the node's diagnostics;
 * - cancel: a turn cancelled at its first audio; time to turnComplete and audio of a new sentence after cancel();
 * - baked lines: CannedResponse → Speak on lines baked beforehand; first audio from the player's line. */
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
  turns: (VoiceTurnFigures & { line: string; textTokensPerSecond: number; voiceTokensPerSecond: number; eagerTokensPerSecond: number })[];
  firstAudioFromLine: LatencySummary;
  firstAudioFromSegment: LatencySummary;
  firstAudioFromSentence: LatencySummary;
  realTimeFactor: { median: number; max: number; sentences: number };
  /** withSpeech: playback pacing (the default); eagerSpeech: every sentence synthesized as soon as it is cut. */
  tokensPerSecond: { withSpeech: number; eagerSpeech: number; withoutSpeech: number; ratio: number; eagerRatio: number };
  underruns: { turns: number; total: number; totalMs: number };
  /** audioAfterCancel: ttsAudio events of a sentence that had sent no audio when cancel() was called. */
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

function speakingGraph(settings: VoiceBenchmarkSettings, synthesisPacing: 'playback' | 'eager') {
  return {
    start: 'answer',
    nodes: [
      {
        name: 'answer',
        type: 'GenerateAndSpeak',
        params: { systemPrompt: SYSTEM_PROMPT, contextSize: 2048, maxTokens: 80, temperature: 0, minSentenceChars: settings.minSentenceChars, synthesisPacing },
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
  const host = {
    loadModel: engineModelLoader,
    models: { chat: { path: settings.chatModelPath }, voice: { path: settings.voiceFolder, purpose: 'tts' as const } },
    contexts: 'own' as const,
  };
  // No audio cache for the spoken turns: the three agents say the same replies, and a sentence one of them cached
  // would reach the next one with no synthesis. The baked lines get a session of their own, with the cache.
  const session = new Session({ ...host, audioCacheBytes: 0 }).create({ gameName: 'bench-voice' });
  const bakedSession = new Session(host).create({ gameName: 'bench-voice-baked' });
  const scratch = mkdtempSync(join(tmpdir(), 'llama-dialog-bench-voice-'));
  try {
    const agentOptions = { defaultModel: 'chat', engine: { threads: settings.threads }, enableDiagnostics: true, voice: { model: 'voice' } };
    const speaking = await session.createAgent({ ...agentOptions, graph: speakingGraph(settings, 'playback'), deliveryMode: 'voice' });
    // The same with every sentence synthesized as soon as it is cut: all of its speech overlaps generation, so its
    // sentences give the real-time factor while the model generates, and its tokens/s what pacing saves.
    const eager = await session.createAgent({ ...agentOptions, graph: speakingGraph(settings, 'eager'), deliveryMode: 'voice' });
    const silent = await session.createAgent({ ...agentOptions, graph: speakingGraph(settings, 'playback'), deliveryMode: 'text' });
    const lines = Array.from({ length: settings.turns + 1 }, (_, index) => PLAYER_LINES[index % PLAYER_LINES.length]!);
    const turns: VoiceBenchmarkReport['turns'] = [];
    const factors: number[] = [];
    const agents = [speaking, eager, silent];
    for (const [index, line] of lines.entries()) {
      // Rotate which agent goes first, so a slow drift of the machine weighs on all alike.
      const timelines = new Map<Agent, VoiceTurnTimeline>();
      for (let k = 0; k < agents.length; k++) {
        const agent = agents[(index + k) % agents.length]!;
        timelines.set(agent, await timedTurn(agent, line, settings.minSentenceChars));
      }
      if (index === 0) continue; // warm-up: loads the voice's ORT session and the model's prompt prefix
      const spoken = timelines.get(speaking)!;
      const figures = spoken.figures();
      const rate = (turn: VoiceTurnFigures): number => (turn.generationMs > 0 ? ((turn.deltas - 1) * 1000) / turn.generationMs : Number.NaN);
      turns.push({
        ...figures,
        line,
        voiceTokensPerSecond: rate(figures),
        eagerTokensPerSecond: rate(timelines.get(eager)!.figures()),
        textTokensPerSecond: rate(timelines.get(silent)!.figures()),
      });
      factors.push(...sentenceRealTimeFactors(timelines.get(eager)!.diagnostics, spoken.sampleRate));
      log(
        `[bench] voice: turn ${index}/${settings.turns}: first audio ${figures.firstAudioFromLineMs?.toFixed(0)} ms from the line, ` +
          `${figures.firstAudioFromSegmentMs?.toFixed(0)} ms from the first segment, ${figures.firstAudioFromSentenceMs?.toFixed(0)} ms from the first sentence`,
      );
    }
    await silent.destroy();
    await eager.destroy();

    log('[bench] voice: cancel at first audio');
    const cancelMs: number[] = [];
    let audioAfterCancel = 0;
    for (let round = 0; round < settings.repeats; round++) {
      let cancelledAt: number | null = null;
      let cancelling: Promise<void> | undefined;
      let sentencesAtCancel = 0;
      const timeline = await timedTurn(speaking, PLAYER_LINES[(round + 3) % PLAYER_LINES.length]!, settings.minSentenceChars, (turn, type) => {
        if (type !== 'ttsAudio') return;
        const sentence = turn.audioArrivals.at(-1)!.sentenceIndex;
        if (cancelledAt === null) {
          // Chunks of this sentence already queued in the turn may still be read after cancel(); a new sentence may not.
          cancelledAt = turn.now();
          sentencesAtCancel = sentence + 1;
          cancelling = speaking.cancel();
        } else if (sentence >= sentencesAtCancel) audioAfterCancel++;
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
    const barks = await bakedSession.createAgent({
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
    const eagerSpeech = mean(turns.map((turn) => turn.eagerTokensPerSecond));
    const firstAudioFromLine = summarize(turns.flatMap((turn) => (turn.firstAudioFromLineMs === null ? [] : [turn.firstAudioFromLineMs])));
    const firstAudioFromSegment = summarize(turns.flatMap((turn) => (turn.firstAudioFromSegmentMs === null ? [] : [turn.firstAudioFromSegmentMs])));
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
      firstAudioFromSegment,
      firstAudioFromSentence,
      realTimeFactor,
      tokensPerSecond: { withSpeech, eagerSpeech, withoutSpeech, ratio: withSpeech / withoutSpeech, eagerRatio: eagerSpeech / withoutSpeech },
      underruns,
      cancel,
      baked,
      strategies: [
        {
          strategy: 'speech',
          summary: {
            firstAudioFromLineMedianMs: firstAudioFromLine.medianMs,
            firstAudioFromSegmentMedianMs: firstAudioFromSegment.medianMs,
            firstAudioFromSentenceMedianMs: firstAudioFromSentence.medianMs,
            tokensPerSecond: withSpeech,
            underruns: underruns.total,
            cancelMedianMs: cancel.medianMs,
            bakedFirstAudioMedianMs: baked.medianMs,
          },
        },
        { strategy: 'speech, eager pacing', summary: { tokensPerSecond: eagerSpeech, realTimeFactor: realTimeFactor.median } },
        { strategy: 'text only', summary: { tokensPerSecond: withoutSpeech } },
      ],
    };
  } finally {
    await session.close();
    await bakedSession.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
