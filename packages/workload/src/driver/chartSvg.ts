/**
 * A load run's time series as a self-contained SVG (no dependency, no script): committed and
 * submitted transactions per second on top, submit→inclusion latency p50 and p99 per second
 * below, over the same time axis.
 */
import type { SecondSample } from './loadResult.js';

/** Size of the chart. */
export interface ChartOptions {
  readonly width: number;
  readonly height: number;
  /** The chart's title. */
  readonly title: string;
}

export const defaultChartOptions: ChartOptions = {
  width: 900,
  height: 560,
  title: 'Monsoon load run: throughput and latency per second',
};

interface Series {
  readonly name: string;
  readonly color: string;
  readonly dashed?: boolean;
  /** y per second; null leaves a gap. */
  readonly values: readonly (number | null)[];
}

interface Panel {
  readonly top: number;
  readonly height: number;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const MARGIN = { left: 72, right: 24, top: 48, bottom: 48 };
const PANEL_GAP = 56;

/** XML text: & < > " escaped. */
function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const fmt = (n: number) =>
  Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
const px = (n: number) => n.toFixed(1);

/** A round step that cuts [0, max] in about `count` intervals: 1, 2 or 5 × 10^k. */
export function niceStep(max: number, count = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/** The SVG of `series` (one sample per second, as a {@link LoadResult} holds them). */
export function chartSvg(series: readonly SecondSample[], opts: Partial<ChartOptions> = {}): string {
  const o = { ...defaultChartOptions, ...opts };
  const plotW = o.width - MARGIN.left - MARGIN.right;
  const panelH = (o.height - MARGIN.top - MARGIN.bottom - PANEL_GAP) / 2;
  const seconds = Math.max(1, series.length);
  const panels: Panel[] = [
    {
      top: MARGIN.top,
      height: panelH,
      yLabel: 'transactions/s',
      series: [
        { name: 'committed tx/s', color: '#1f77b4', values: series.map((s) => s.committed) },
        { name: 'submitted tx/s', color: '#7f7f7f', dashed: true, values: series.map((s) => s.submitted) },
      ],
    },
    {
      top: MARGIN.top + panelH + PANEL_GAP,
      height: panelH,
      yLabel: 'latency (ms)',
      series: [
        { name: 'latency p50', color: '#2ca02c', values: series.map((s) => s.p50Ms) },
        { name: 'latency p99', color: '#d62728', values: series.map((s) => s.p99Ms) },
      ],
    },
  ];
  const xStep = niceStep(seconds, 10);
  const x = (t: number) => MARGIN.left + (t / seconds) * plotW;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${o.width}" height="${o.height}" viewBox="0 0 ${o.width} ${o.height}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(o.title)}</title>`,
    `<rect x="0" y="0" width="${o.width}" height="${o.height}" fill="#ffffff"/>`,
    `<text x="${o.width / 2}" y="24" text-anchor="middle" font-size="15">${esc(o.title)}</text>`,
  ];
  for (const p of panels) {
    const bottom = p.top + p.height;
    let max = 0;
    for (const s of p.series) for (const v of s.values) if (v !== null && v > max) max = v;
    const yStep = niceStep(max);
    const yMax = max > 0 ? Math.ceil(max / yStep) * yStep : yStep;
    const y = (v: number) => bottom - (v / yMax) * p.height;
    out.push(`<g class="panel">`);
    // Grid and y ticks.
    for (let v = 0; v <= yMax + yStep / 2; v += yStep) {
      out.push(
        `<line x1="${MARGIN.left}" y1="${px(y(v))}" x2="${MARGIN.left + plotW}" y2="${px(y(v))}" stroke="#e5e5e5"/>`,
        `<text x="${MARGIN.left - 6}" y="${px(y(v) + 4)}" text-anchor="end">${fmt(v)}</text>`,
      );
    }
    // x ticks.
    for (let t = 0; t <= seconds + 1e-9; t += xStep) {
      out.push(
        `<line x1="${px(x(t))}" y1="${bottom}" x2="${px(x(t))}" y2="${bottom + 4}" stroke="#333333"/>`,
        `<text x="${px(x(t))}" y="${bottom + 16}" text-anchor="middle">${fmt(t)}</text>`,
      );
    }
    // Axes and their labels.
    out.push(
      `<line class="axis x" x1="${MARGIN.left}" y1="${bottom}" x2="${MARGIN.left + plotW}" y2="${bottom}" stroke="#333333"/>`,
      `<line class="axis y" x1="${MARGIN.left}" y1="${p.top}" x2="${MARGIN.left}" y2="${bottom}" stroke="#333333"/>`,
      `<text class="axis-label" x="${MARGIN.left + plotW / 2}" y="${bottom + 34}" text-anchor="middle">time (s)</text>`,
      `<text class="axis-label" x="16" y="${px(p.top + p.height / 2)}" text-anchor="middle" transform="rotate(-90 16 ${px(p.top + p.height / 2)})">${esc(p.yLabel)}</text>`,
    );
    // Series: one path each; a second without a value (no inclusion) leaves a gap.
    p.series.forEach((s, i) => {
      const runs: string[][] = [];
      let run: string[] | undefined;
      s.values.forEach((v, t) => {
        if (v === null) {
          run = undefined;
          return;
        }
        if (run === undefined) {
          run = [];
          runs.push(run);
        }
        run.push(`${px(x(t + 0.5))} ${px(y(v))}`);
      });
      // A lone point gets a tiny segment so that its round cap shows as a dot.
      const d = runs.map((r) => `M${r.join(' L')}${r.length === 1 ? ' h0.1' : ''}`).join(' ');
      out.push(
        `<path class="series" data-series="${esc(s.name)}" d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linecap="round"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      );
      // Legend entry, above the panel (clear of the data).
      const lx = MARGIN.left + 170 * i;
      const ly = p.top - 10;
      out.push(
        `<line x1="${lx}" y1="${ly}" x2="${lx + 20}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
        `<text x="${lx + 26}" y="${ly + 4}">${esc(s.name)}</text>`,
      );
    });
    out.push('</g>');
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
