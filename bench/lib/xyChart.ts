/**
 * A small self-contained SVG line chart (no dependency, no script) for benchmark sweeps: one x
 * axis of numbers (the swept parameter), one or more series of y values, points marked and
 * labelled with their value. The paper suite draws each of its figures with it.
 */
import { niceStep } from '@monsoon/workload';

export interface XySeries {
  readonly name: string;
  /** y per x of the chart's `xs`; null leaves a gap. */
  readonly values: readonly (number | null)[];
}

export interface XyChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly xs: readonly number[];
  readonly series: readonly XySeries[];
  /** Mark and label every point (default: when there are at most 12 x values). */
  readonly points?: boolean;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
const W = 640;
const H = 400;
const M = { left: 72, right: 150, top: 44, bottom: 52 };

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A compact label: 1234 → 1,234; 0.1234 → 0.123. */
export function fmtValue(v: number): string {
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
  return Number(v.toPrecision(3)).toString();
}

/** The chart as an SVG document. */
export function xyChartSvg(c: XyChart): string {
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const all = c.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = Math.max(1e-9, ...all);
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const x = (i: number) => M.left + (c.xs.length === 1 ? plotW / 2 : (i * plotW) / (c.xs.length - 1));
  const y = (v: number) => M.top + plotH - (v / top) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(c.title)}</text>`,
  ];
  for (let v = 0; v <= top + step / 2; v += step) {
    out.push(
      `<line x1="${M.left}" x2="${M.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(fmtValue(v))}</text>`,
    );
  }
  const points = c.points ?? c.xs.length <= 12;
  const every = Math.max(1, Math.ceil(c.xs.length / 12));
  c.xs.forEach((xv, i) => {
    if (i % every !== 0) return;
    out.push(
      `<text x="${x(i).toFixed(1)}" y="${M.top + plotH + 18}" text-anchor="middle">${esc(String(xv))}</text>`,
    );
  });
  out.push(
    `<text x="${M.left + plotW / 2}" y="${H - 12}" text-anchor="middle">${esc(c.xLabel)}</text>`,
    `<text transform="translate(16 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(c.yLabel)}</text>`,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + plotH}" stroke="#333"/>`,
    `<line x1="${M.left}" x2="${M.left + plotW}" y1="${M.top + plotH}" y2="${M.top + plotH}" stroke="#333"/>`,
  );
  c.series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length]!;
    const pts = s.values
      .map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`))
      .filter((p): p is string => p !== null);
    if (pts.length > 1)
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    s.values.forEach((v, i) => {
      if (v === null || !points) return;
      out.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5" fill="${color}"/>`,
        `<text x="${x(i).toFixed(1)}" y="${(y(v) - 8).toFixed(1)}" text-anchor="middle" fill="${color}">${esc(fmtValue(v))}</text>`,
      );
    });
    const ly = M.top + 10 + k * 18;
    out.push(
      `<rect x="${W - M.right + 12}" y="${ly - 9}" width="12" height="12" fill="${color}"/>`,
      `<text x="${W - M.right + 30}" y="${ly + 1}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
