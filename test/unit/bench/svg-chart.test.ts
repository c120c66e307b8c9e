import { describe, expect, it } from 'vitest';
import { escapeXml, niceTicks, renderLineChartSvg } from '../../../src/bench/svg-line-chart.js';

const chart = renderLineChartSvg({
  title: 'Per-turn cost <blacksmith & co>',
  subtitleLines: ['backend cpu · 2 threads', 'model small.gguf'],
  xLabel: 'turn',
  panels: [
    {
      title: 'Turn latency',
      yLabel: 'ms',
      series: [
        { name: 'ours', values: [100, 50, 60, null, 55] },
        { name: 'node-llama-cpp', values: [120, 80, 90, 400, 85] },
        { name: 'naive', values: [100, 150, 200, 250, 300] },
      ],
    },
    {
      title: 'Evaluated tokens',
      yLabel: 'tokens',
      series: [
        { name: 'ours', values: [300, 70, 70, 70, 70] },
        { name: 'naive', values: [300, 370, 440, 510, 580] },
      ],
    },
  ],
});

describe('renderLineChartSvg', () => {
  it('writes one standalone SVG document with a viewBox', () => {
    expect(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(chart.trimEnd().endsWith('</svg>')).toBe(true);
    expect(chart.match(/<svg /g)).toHaveLength(1);
    expect(chart).toMatch(/viewBox="0 0 960 \d+"/);
  });

  it('draws one panel per metric with one line and one legend entry per series', () => {
    const panels = chart.split('<g class="panel"').slice(1);
    expect(panels).toHaveLength(2);
    expect(panels[0]?.match(/class="series"/g)).toHaveLength(3);
    expect(panels[0]?.match(/class="legend-entry"/g)).toHaveLength(3);
    expect(panels[1]?.match(/class="series"/g)).toHaveLength(2);
    expect(panels[1]).toContain('data-series="naive"');
    expect(panels[0]?.match(/class="axis"/g)).toHaveLength(2);
  });

  it('breaks a line at a missing value instead of bridging it', () => {
    const ours = /data-series="ours" d="([^"]+)"/.exec(chart)?.[1] ?? '';
    expect(ours.match(/M/g)).toHaveLength(2);
    expect(ours.match(/L/g)).toHaveLength(2);
  });

  it('keeps every point inside the plot area', () => {
    for (const match of chart.matchAll(/d="([^"]+)"/g)) {
      for (const point of (match[1] ?? '').matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)) {
        const x = Number(point[1]);
        const y = Number(point[2]);
        expect(x).toBeGreaterThanOrEqual(80);
        expect(x).toBeLessThanOrEqual(960 - 190);
        expect(y).toBeGreaterThan(0);
      }
    }
  });

  it('escapes text', () => {
    expect(chart).toContain('Per-turn cost &lt;blacksmith &amp; co&gt;');
    expect(chart).not.toContain('<blacksmith');
    expect(escapeXml(`"a" & 'b'`)).toBe('&quot;a&quot; &amp; &apos;b&apos;');
  });
});

describe('renderLineChartSvg with x values', () => {
  it('places points at their x (e.g. arrival seconds) on an axis from 0 to a round tick past the largest x', () => {
    const svg = renderLineChartSvg({
      title: 'ttft over time',
      xLabel: 's',
      panels: [
        {
          title: 'ttft',
          yLabel: 'ms',
          series: [
            { name: 'fifo', x: [0, 5, 10], values: [100, 200, 100] },
            { name: 'batched', x: [2.5, 7.5], values: [50, null] },
          ],
        },
      ],
    });
    // Plot spans x 80..770 (960 − 190) for 0..10 s: 69 px per second.
    const fifo = /data-series="fifo" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect([...fifo.matchAll(/[ML](-?[\d.]+) /g)].map((point) => Number(point[1]))).toEqual([80, 425, 770]);
    const batched = /data-series="batched" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(batched).toMatch(/^M252\.5 [\d.]+$/);
    expect(svg).toContain('>10</text>');
  });
});

describe('niceTicks', () => {
  it('covers the range with round steps', () => {
    expect(niceTicks(0, 580)).toEqual([0, 200, 400, 600]);
    expect(niceTicks(0, 480)).toEqual([0, 100, 200, 300, 400, 500]);
    expect(niceTicks(0, 37)).toEqual([0, 10, 20, 30, 40]);
    expect(niceTicks(1, 40)).toEqual([0, 10, 20, 30, 40]);
    expect(niceTicks(0, 0.8)).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
  });

  it('gives a usable axis for an empty range', () => {
    expect(niceTicks(0, 0)).toEqual([0, 1]);
  });
});
