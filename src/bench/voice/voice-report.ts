/** The text report of `bench --workload voice`: latencies, speech cost, then the goals. */
import { renderTable } from '../text-table.js';
import type { LatencySummary, VoiceBenchmarkReport } from './voice-benchmark.js';

const fixed = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');

export function renderVoiceText(report: VoiceBenchmarkReport): string {
  const latency = (name: string, summary: LatencySummary): string[] => [
    name,
    String(summary.samples),
    fixed(summary.medianMs),
    fixed(summary.p95Ms),
    fixed(summary.minMs),
    fixed(summary.maxMs),
  ];
  const { tokensPerSecond, realTimeFactor, underruns, cancel, baked } = report;
  return [
    `Voice: ${report.settings.turns} spoken turns (+1 warm-up), ${report.settings.threads} threads, minSentenceChars ${report.settings.minSentenceChars}`,
    `  chat model ${report.settings.chatModelPath}`,
    `  voice ${report.settings.voiceFolder}`,
    '',
    'Latency, milliseconds:',
    renderTable(
      [{ header: 'measure', align: 'left' }, { header: 'n' }, { header: 'median' }, { header: 'p95' }, { header: 'min' }, { header: 'max' }],
      [
        latency('first audio from the player line', report.firstAudioFromLine),
        latency('first audio from the first segment end', report.firstAudioFromSegment),
        latency('first audio from the first sentence end', report.firstAudioFromSentence),
        latency('cancel at first audio -> turnComplete', cancel),
        latency('baked line: first audio from the line', baked),
      ],
    ),
    '',
    'Speech cost:',
    renderTable(
      [{ header: 'measure', align: 'left' }, { header: 'value' }],
      [
        ['model tokens/s without speech', fixed(tokensPerSecond.withoutSpeech)],
        ['model tokens/s with speech (playback pacing, the default)', fixed(tokensPerSecond.withSpeech)],
        ['with / without', fixed(tokensPerSecond.ratio, 3)],
        ['model tokens/s with speech, eager pacing', fixed(tokensPerSecond.eagerSpeech)],
        ['eager with / without', fixed(tokensPerSecond.eagerRatio, 3)],
        [`real-time factor while generating (eager pacing, median of ${realTimeFactor.sentences} sentences)`, fixed(realTimeFactor.median, 3)],
        ['real-time factor, worst sentence', fixed(realTimeFactor.max, 3)],
        ['underruns (turns with any / total / silence ms)', `${underruns.turns} / ${underruns.total} / ${fixed(underruns.totalMs, 0)}`],
        ['audio events after cancel()', String(cancel.audioAfterCancel)],
        ['syntheses while speaking baked lines', String(baked.synthesizedWhileBaked)],
      ],
    ),
    '',
    'Goals:',
    `  first audio <= 150 ms after the token that closes the first sentence (median): ${fixed(report.firstAudioFromSentence.medianMs)} ms ${verdict(report.firstAudioFromSentence.medianMs <= 150)}`,
    `    (after the token that closes the first speech segment, the first clause: ${fixed(report.firstAudioFromSegment.medianMs)} ms)`,
    `  first audio <= 700 ms from the player line (median, warm): ${fixed(report.firstAudioFromLine.medianMs)} ms ${verdict(report.firstAudioFromLine.medianMs <= 700)}`,
    `  real-time factor <= 0.3 while generating: ${fixed(realTimeFactor.median, 3)} ${verdict(realTimeFactor.median <= 0.3)}`,
    `  tokens/s with speech >= 0.85x without: ${fixed(tokensPerSecond.ratio, 3)}x ${verdict(tokensPerSecond.ratio >= 0.85)}`,
    `  baked line first audio <= 5 ms (median): ${fixed(baked.medianMs, 2)} ms ${verdict(baked.medianMs <= 5)}`,
    '',
  ].join('\n');
}
