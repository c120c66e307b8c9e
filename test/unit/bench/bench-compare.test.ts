import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderBenchComparison } from '../../../src/bench/bench-compare.js';
import { runCli } from '../../../src/cli/run.js';
import { isLlamaDialogError } from '../../../src/errors.js';

function tavernReport(device: string, fifoTtftP50: number, batched: boolean) {
  const summary = (ttft: number) => ({
    lines: 12,
    ttftP50Ms: ttft,
    ttftP95Ms: ttft * 2,
    turnP50Ms: ttft + 100,
    turnP95Ms: ttft + 300,
    wallMs: 4000,
    generatedTokens: 96,
    tokensPerSecond: 24,
    evaluatedTokens: 7000,
    peakKvBytes: 64 * 2 ** 20,
    peakKvBytesUsed: 16 * 2 ** 20,
    peakRssBytes: 512 * 2 ** 20,
    rssAtStartBytes: 400 * 2 ** 20,
  });
  return {
    tool: 'llama-dialog bench',
    kind: 'tavern',
    schemaVersion: 1,
    workload: { name: 'tavern', fingerprint: 'aaaabbbbccccdddd' },
    machine: { backend: 'cuda', device, vramBytes: 80 * 2 ** 30, gpuLayers: 99, cpu: 'Xeon' },
    strategies: [
      { strategy: 'fifo', status: 'ok', summary: summary(fifoTtftP50) },
      batched ? { strategy: 'batched', status: 'ok', summary: summary(fifoTtftP50 / 4) } : { strategy: 'batched', status: 'failed', summary: null },
    ],
  };
}

const conversationReport = {
  tool: 'llama-dialog bench',
  schemaVersion: 1,
  workload: { name: 'default', fingerprint: '1af9a32b2229c2f7' },
  environment: { backend: 'cpu', device: 'AMD EPYC', threads: 2 },
  strategies: [{ strategy: 'ours', summary: { totalWallMs: 40450, medianTurnMs: 981, p95TurnMs: 1256, medianFirstTokenMs: 286, p95FirstTokenMs: 614, totalEvaluatedTokens: 4142, totalGeneratedTokens: 1280, evaluatedOverIdeal: 1 } }],
};

function cells(text: string, strategy: string, metric: string): string[] {
  const row = text.split('\n').find((entry) => entry.startsWith(strategy) && entry.includes(` ${metric} `));
  if (!row) throw new Error(`no row ${strategy} ${metric} in\n${text}`);
  return row.slice(row.indexOf(metric) + metric.length).trim().split(/\s{2,}/);
}

describe('renderBenchComparison', () => {
  it('prints one column per file headed by its machine, one row per strategy × metric, and the 2 ÷ 1 ratio', () => {
    const text = renderBenchComparison([
      { path: 'a100.json', json: tavernReport('NVIDIA A100', 200, false) },
      { path: 'h200.json', json: tavernReport('NVIDIA H200', 100, true) },
    ]);
    const header = text.split('\n').find((entry) => entry.startsWith('strategy'));
    expect(header?.split(/\s{2,}/)).toEqual(['strategy', 'metric', 'NVIDIA A100 (cuda)', 'NVIDIA H200 (cuda)', '2 ÷ 1']);
    expect(text).toContain('[1] NVIDIA A100 (cuda): a100.json — NVIDIA A100 (cuda), VRAM 80.0 GiB, gpuLayers 99, CPU Xeon');
    expect(text).toContain('no figures for batched (failed)');
    expect(cells(text, 'fifo', 'ttft p50 ms')).toEqual(['200', '100', '0.50']);
    expect(cells(text, 'fifo', 'ttft p95 ms')).toEqual(['400', '200', '0.50']);
    expect(cells(text, 'fifo', 'peak KV')).toEqual(['64.0 MiB', '64.0 MiB', '1.00']);
    expect(cells(text, 'fifo', 'peak KV used')).toEqual(['16.0 MiB', '16.0 MiB', '1.00']);
    expect(cells(text, 'fifo', 'tokens/s')).toEqual(['24.0', '24.0', '1.00']);
    expect(cells(text, 'batched', 'ttft p50 ms')).toEqual(['—', '25', '—']);
    expect(text).not.toContain('different workloads');
    // no file was profiled: no engine rows at all
    expect(text).not.toContain('engine busy share');
  });

  it('adds the engine rows of --profile runs: busy share, generation width, the widest generation step', () => {
    const profiled = (busyShare: number, widestMs: number) => {
      const report = tavernReport('NVIDIA H200', 100, true);
      const engineSteps = {
        steps: 100,
        busyMs: 3000,
        busyShare,
        meanGenerationWidth: 6.5,
        byWidth: [
          { sequences: 8, generationSteps: 0, generationMedianMs: null, promptSteps: 3, promptMedianMs: 90, promptTokens: 60, totalMs: 270 },
          { sequences: 7, generationSteps: 40, generationMedianMs: widestMs, promptSteps: 0, promptMedianMs: null, promptTokens: 0, totalMs: 2000 },
          { sequences: 1, generationSteps: 5, generationMedianMs: 9, promptSteps: 1, promptMedianMs: 300, promptTokens: 700, totalMs: 345 },
        ],
        log: [],
      };
      return { ...report, strategies: [report.strategies[0], { ...report.strategies[1], engineSteps }] };
    };
    const text = renderBenchComparison([
      { path: 'cpu.json', json: { ...profiled(0.98, 42), machine: { backend: 'cpu', device: 'AMD EPYC' } } },
      { path: 'gpu.json', json: profiled(0.49, 21) },
    ]);
    expect(cells(text, 'batched', 'engine busy share')).toEqual(['0.98', '0.49', '0.50']);
    expect(cells(text, 'batched', 'sequences per generation step')).toEqual(['6.50', '6.50', '1.00']);
    // the widest width with generation-only steps (7: the 8-wide steps all carried prompt tokens)
    expect(cells(text, 'batched', 'widest generation step ms')).toEqual(['42', '21', '0.50']);
    // fifo was not profiled in either file
    expect(text.split('\n').some((line) => line.startsWith('fifo') && line.includes('engine busy share'))).toBe(false);
  });

  it('reads conversation-workload reports too, and says when the files ran different work', () => {
    const text = renderBenchComparison([
      { path: 'run.json', json: conversationReport },
      { path: 'tavern.json', json: tavernReport('NVIDIA H200', 100, true) },
    ]);
    expect(cells(text, 'ours', 'total s')).toEqual(['40.45', '—', '—']);
    expect(cells(text, 'ours', 'turn median ms')).toEqual(['981', '—', '—']);
    expect(cells(text, 'fifo', 'ttft p50 ms')).toEqual(['—', '100', '—']);
    expect(text).toContain('different workloads');
  });

  it('reads voice reports: each strategy lists the figures it has; sub-10 ms figures keep two decimals', () => {
    const voiceReport = (bakedMs: number, tokensPerSecond: number) => ({
      tool: 'llama-dialog bench',
      kind: 'voice',
      workload: { name: 'voice', fingerprint: 'turns10-chars12-t2' },
      environment: { device: 'AMD EPYC', backend: 'cpu', threads: 2 },
      strategies: [
        { strategy: 'speech', summary: { firstAudioFromLineMedianMs: 278, firstAudioFromSentenceMedianMs: 84, tokensPerSecond, underruns: 0, cancelMedianMs: 0.7, bakedFirstAudioMedianMs: bakedMs } },
        { strategy: 'speech, eager pacing', summary: { tokensPerSecond: 80, realTimeFactor: 0.084 } },
        { strategy: 'text only', summary: { tokensPerSecond: 104 } },
      ],
    });
    const text = renderBenchComparison([
      { path: 'a.json', json: voiceReport(0.26, 102) },
      { path: 'b.json', json: voiceReport(0.13, 92) },
    ]);
    expect(cells(text, 'speech', 'baked first audio ms')).toEqual(['0.26', '0.13', '0.50']);
    expect(cells(text, 'speech', 'first audio from line ms')).toEqual(['278', '278', '1.00']);
    expect(cells(text, 'speech, eager pacing', 'real-time factor')).toEqual(['0.08', '0.08', '1.00']);
    expect(cells(text, 'text only', 'tokens/s')).toEqual(['104.0', '104.0', '1.00']);
    expect(text).not.toMatch(/text only\s+real-time factor/);
  });

  it('tells columns of the same machine apart, and refuses a file that is not a bench report', () => {
    const text = renderBenchComparison([
      { path: 'a.json', json: tavernReport('NVIDIA H200', 100, true) },
      { path: 'b.json', json: tavernReport('NVIDIA H200', 100, true) },
      { path: 'c.json', json: tavernReport('NVIDIA H200', 100, true) },
    ]);
    expect(text.split('\n').find((entry) => entry.startsWith('strategy'))?.split(/\s{2,}/)).toEqual([
      'strategy',
      'metric',
      'NVIDIA H200 (cuda)',
      'NVIDIA H200 (cuda) #2',
      'NVIDIA H200 (cuda) #3',
    ]);
    let caught: unknown;
    try {
      renderBenchComparison([
        { path: 'a.json', json: conversationReport },
        { path: 'notes.json', json: { hello: 'world' } },
      ]);
    } catch (error) {
      caught = error;
    }
    expect(isLlamaDialogError(caught, 'InvalidArgument')).toBe(true);
    expect((caught as Error).message).toContain('notes.json');
  });
});

describe('llama-dialog bench compare', () => {
  it('reads the files named after the subcommand and prints the comparison', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
    writeFileSync(join(dir, 'a.json'), JSON.stringify(tavernReport('NVIDIA A100', 200, true)));
    writeFileSync(join(dir, 'b.json'), JSON.stringify(tavernReport('NVIDIA H200', 100, true)));
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => (stdout += text), stderr: (text: string) => (stderr += text), stderrIsTty: false };
    expect(await runCli(['bench', 'compare', join(dir, 'a.json'), join(dir, 'b.json')], io)).toBe(0);
    expect(stderr).toBe('');
    expect(cells(stdout, 'batched', 'ttft p50 ms')).toEqual(['50', '25', '0.50']);
    stdout = '';
    expect(await runCli(['bench', 'compare', join(dir, 'a.json')], io)).toBe(2);
    expect(stderr).toContain('at least two');
  });
});
