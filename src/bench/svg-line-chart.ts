/**
 * A dependency-free SVG line chart: panels stacked vertically that share the x axis (turn number, or any x values
 * the series give), one line per series, axes with round ticks, a legend. Written by hand because a benchmark picture must not
 * pull a plotting library into an inference package.
 */

/** One line: a value per x position (turn 1..n, or `x`); `null` leaves a gap. */
export interface ChartSeries {
  name: string;
  values: readonly (number | null)[];
  /**
   * The x of each value (same length, ascending), e.g. a time; absent: value k sits at x = k + 1. When any series of a
   * panel has x values, the panel's x axis spans them all.
   */
  x?: readonly number[];
}

export interface ChartPanel {
  title: string;
  /** Label of the y axis, with its unit. */
  yLabel: string;
  series: readonly ChartSeries[];
}

export interface LineChartOptions {
  title: string;
  /** Smaller lines under the title (backend, model, settings). */
  subtitleLines?: readonly string[];
  xLabel: string;
  panels: readonly ChartPanel[];
  /** Pixels (default 960). */
  width?: number;
  /** Pixels per panel (default 300). */
  panelHeight?: number;
}

/** Colours that stay distinguishable for common colour-vision deficiencies (Okabe–Ito). */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];

const MARGIN = { left: 80, right: 190, top: 40, bottom: 50 };
const LINE_HEIGHT = 18;

/** Renders the chart as a standalone SVG document (UTF-8 text). */
export function renderLineChartSvg(options: LineChartOptions): string {
  const width = options.width ?? 960;
  const panelHeight = options.panelHeight ?? 300;
  const subtitleLines = options.subtitleLines ?? [];
  const headerHeight = 30 + subtitleLines.length * LINE_HEIGHT;
  const panelOuterHeight = panelHeight + MARGIN.top + MARGIN.bottom;
  const height = headerHeight + options.panels.length * panelOuterHeight + 10;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text class="title" x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(options.title)}</text>`,
  ];
  subtitleLines.forEach((line, index) => {
    parts.push(
      `<text class="subtitle" x="${width / 2}" y="${22 + (index + 1) * LINE_HEIGHT}" text-anchor="middle" fill="#444444">${escapeXml(line)}</text>`,
    );
  });
  options.panels.forEach((panel, index) => {
    const top = headerHeight + index * panelOuterHeight;
    parts.push(renderPanel(panel, { top, width, panelHeight, xLabel: options.xLabel }));
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

interface PanelFrame {
  top: number;
  width: number;
  panelHeight: number;
  xLabel: string;
}

function renderPanel(panel: ChartPanel, frame: PanelFrame): string {
  const plotLeft = MARGIN.left;
  const plotTop = frame.top + MARGIN.top;
  const plotWidth = frame.width - MARGIN.left - MARGIN.right;
  const plotHeight = frame.panelHeight;
  const plotBottom = plotTop + plotHeight;

  const pointCount = Math.max(1, ...panel.series.map((series) => series.values.length));
  const finiteValues = panel.series.flatMap((series) =>
    series.values.filter((value): value is number => value !== null && Number.isFinite(value)),
  );
  const yTicks = niceTicks(0, Math.max(0, ...finiteValues));
  const yMax = yTicks[yTicks.length - 1] ?? 1;
  const explicitX = panel.series.flatMap((series) => series.x ?? []).filter((value) => Number.isFinite(value));
  // Turn numbers start at 1; explicit x values (times) span from 0 or their smallest value.
  const xMin = explicitX.length > 0 ? Math.min(0, ...explicitX) : 1;
  const xTicks =
    explicitX.length > 0 ? niceTicks(xMin, Math.max(xMin, ...explicitX)) : niceTicks(1, Math.max(1, pointCount)).filter((tick) => tick >= 1 && tick <= pointCount);
  const xMax = explicitX.length > 0 ? (xTicks[xTicks.length - 1] ?? xMin + 1) : pointCount;

  const xOf = (x: number): number => (xMax === xMin ? plotLeft + plotWidth / 2 : plotLeft + ((x - xMin) / (xMax - xMin)) * plotWidth);
  const yOf = (value: number): number => plotBottom - (yMax === 0 ? 0 : (value / yMax) * plotHeight);

  const out: string[] = [`<g class="panel" data-title="${escapeXml(panel.title)}">`];
  out.push(
    `<text x="${plotLeft + plotWidth / 2}" y="${plotTop - 12}" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(panel.title)}</text>`,
  );
  for (const tick of yTicks) {
    const y = round(yOf(tick));
    out.push(`<line x1="${plotLeft}" y1="${y}" x2="${plotLeft + plotWidth}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${plotLeft - 6}" y="${y + 4}" text-anchor="end">${formatTick(tick)}</text>`);
  }
  for (const tick of xTicks) {
    const x = round(xOf(tick));
    out.push(`<line x1="${x}" y1="${plotBottom}" x2="${x}" y2="${plotBottom + 5}" stroke="#333333"/>`);
    out.push(`<text x="${x}" y="${plotBottom + 18}" text-anchor="middle">${formatTick(tick)}</text>`);
  }
  out.push(
    `<line class="axis" x1="${plotLeft}" y1="${plotBottom}" x2="${plotLeft + plotWidth}" y2="${plotBottom}" stroke="#333333"/>`,
    `<line class="axis" x1="${plotLeft}" y1="${plotTop}" x2="${plotLeft}" y2="${plotBottom}" stroke="#333333"/>`,
    `<text x="${plotLeft + plotWidth / 2}" y="${plotBottom + 38}" text-anchor="middle">${escapeXml(frame.xLabel)}</text>`,
    `<text x="${plotLeft - 58}" y="${plotTop + plotHeight / 2}" text-anchor="middle" ` +
      `transform="rotate(-90 ${plotLeft - 58} ${plotTop + plotHeight / 2})">${escapeXml(panel.yLabel)}</text>`,
  );

  panel.series.forEach((series, index) => {
    const colour = PALETTE[index % PALETTE.length] ?? '#000000';
    const path = linePath(series.values, series.x, xOf, yOf);
    if (path !== '') {
      out.push(
        `<path class="series" data-series="${escapeXml(series.name)}" d="${path}" fill="none" stroke="${colour}" stroke-width="1.8" stroke-linejoin="round"/>`,
      );
    }
    const legendY = plotTop + 10 + index * LINE_HEIGHT;
    const legendX = plotLeft + plotWidth + 16;
    out.push(
      `<g class="legend-entry"><line x1="${legendX}" y1="${legendY}" x2="${legendX + 22}" y2="${legendY}" stroke="${colour}" stroke-width="3"/>` +
        `<text x="${legendX + 28}" y="${legendY + 4}">${escapeXml(series.name)}</text></g>`,
    );
  });
  out.push('</g>');
  return out.join('\n');
}

/** `M x y L x y …`, starting a new sub-path after each gap so missing turns are not bridged. */
function linePath(
  values: readonly (number | null)[],
  xs: readonly number[] | undefined,
  xOf: (x: number) => number,
  yOf: (value: number) => number,
): string {
  const commands: string[] = [];
  let penDown = false;
  values.forEach((value, index) => {
    if (value === null || !Number.isFinite(value)) {
      penDown = false;
      return;
    }
    const x = xs ? xs[index] : index + 1;
    if (x === undefined || !Number.isFinite(x)) {
      penDown = false;
      return;
    }
    commands.push(`${penDown ? 'L' : 'M'}${round(xOf(x))} ${round(yOf(value))}`);
    penDown = true;
  });
  return commands.join(' ');
}

/**
 * Round tick values from `min` to at least `max`: steps of 1, 2 or 5 × 10^k, about five of them.
 * Exported for tests.
 */
export function niceTicks(min: number, max: number): number[] {
  const span = max - min;
  if (!(span > 0)) return [min, min + 1];
  const rough = span / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((factor) => factor * magnitude >= rough) ?? 10) * magnitude;
  const ticks: number[] = [];
  const first = Math.floor(min / step) * step;
  for (let value = first; value < max + step * 0.999; value += step) ticks.push(roundTo(value, step));
  return ticks;
}

function roundTo(value: number, step: number): number {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  return Number(value.toFixed(decimals));
}

function formatTick(value: number): string {
  return Math.abs(value) >= 10_000 ? `${value / 1000}k` : String(value);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Escapes text for SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
