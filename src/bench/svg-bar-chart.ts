import { escapeXml } from './svg-line-chart.js';

/**
 * A dependency-free SVG chart of horizontal bars for shares (0–1): panels stacked vertically, one bar per row, its
 * value printed at its end. The quality benchmark draws one panel per set (intent accuracy per method, tool-call
 * shares per mode, recall per trim level); written by hand for the same reason as the line chart.
 */

export interface BarRow {
  label: string;
  /** A share in 0..1; null draws no bar and prints "—". */
  value: number | null;
  /** Drawn in the highlight colour (the reference method, a goal line's subject). */
  highlight?: boolean;
}

export interface BarPanel {
  title: string;
  rows: readonly BarRow[];
  /** A vertical mark at this share (a goal), labelled. */
  goal?: { value: number; label: string };
}

export interface BarChartOptions {
  title: string;
  subtitleLines?: readonly string[];
  panels: readonly BarPanel[];
  /** Pixels (default 960). */
  width?: number;
}

const ROW_HEIGHT = 22;
const LABEL_WIDTH = 300;
const RIGHT_MARGIN = 70;
const PANEL_GAP = 46;
const LINE_HEIGHT = 18;

export function renderBarChartSvg(options: BarChartOptions): string {
  const width = options.width ?? 960;
  const subtitleLines = options.subtitleLines ?? [];
  const barWidth = width - LABEL_WIDTH - RIGHT_MARGIN;
  let y = 30 + subtitleLines.length * LINE_HEIGHT + 10;
  const body: string[] = [];
  for (const panel of options.panels) {
    y += PANEL_GAP - 16;
    body.push(`<text x="${LABEL_WIDTH}" y="${y}" font-size="14" font-weight="bold">${escapeXml(panel.title)}</text>`);
    y += 10;
    const top = y;
    for (const row of panel.rows) {
      const value = row.value === null ? null : Math.min(1, Math.max(0, row.value));
      body.push(`<text x="${LABEL_WIDTH - 8}" y="${y + 15}" text-anchor="end">${escapeXml(row.label)}</text>`);
      body.push(`<rect x="${LABEL_WIDTH}" y="${y + 3}" width="${barWidth}" height="${ROW_HEIGHT - 6}" fill="#f0f0f0"/>`);
      if (value !== null) {
        const fill = row.highlight ? '#D55E00' : '#0072B2';
        body.push(`<rect class="bar" x="${LABEL_WIDTH}" y="${y + 3}" width="${(value * barWidth).toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${fill}"/>`);
      }
      const text = value === null ? '—' : `${(value * 100).toFixed(1)} %`;
      body.push(`<text x="${LABEL_WIDTH + barWidth + 6}" y="${y + 15}">${text}</text>`);
      y += ROW_HEIGHT;
    }
    if (panel.goal) {
      const x = LABEL_WIDTH + Math.min(1, Math.max(0, panel.goal.value)) * barWidth;
      body.push(`<line x1="${x.toFixed(1)}" y1="${top}" x2="${x.toFixed(1)}" y2="${y}" stroke="#000000" stroke-dasharray="4 3"/>`);
      body.push(`<text x="${x.toFixed(1)}" y="${y + 14}" text-anchor="middle" font-size="11">${escapeXml(panel.goal.label)}</text>`);
      y += 14;
    }
  }
  const height = y + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(options.title)}</text>`,
    ...subtitleLines.map(
      (line, index) => `<text x="${width / 2}" y="${22 + (index + 1) * LINE_HEIGHT}" text-anchor="middle" fill="#444444">${escapeXml(line)}</text>`,
    ),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
