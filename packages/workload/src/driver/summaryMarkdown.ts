/** A load run as a Markdown summary: one table of the numbers that matter, then sampled refusal reasons. */
import type { LoadResult } from './loadResult.js';
import { describeSteadiness, runSteadiness } from './steadiness.js';
import { REFUSERS } from './txSubmitter.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const dec = (n: number, digits = 1) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ms = (n: number) => (n >= 100 ? int(n) : dec(n));
const bytes = (n: number | null) => (n === null ? 'n/a' : int(n));
/** Calls per transaction: three significant digits below 1 (a Submit call carries hundreds). */
const calls = (n: number | null) => (n === null ? 'n/a' : n >= 1 ? dec(n) : n.toPrecision(2));
/** Text safe in a table cell or inline code. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/`/g, "'").replace(/\s+/g, ' ');

/** One line saying how the load was driven. */
export function describeLoad(r: LoadResult): string {
  const c = r.config;
  const shape =
    c.mode === 'open'
      ? `open loop at ${int(c.rate ?? 0)} tx/s`
      : `closed loop, ${int(c.concurrency ?? 0)} in flight`;
  const length =
    c.durationMs !== undefined ? `for ${dec(c.durationMs / 1000)} s` : `${int(c.count ?? 0)} transactions`;
  const hot = `${dec(c.hotFraction * 100, 0)}% of accounts take ${dec(c.hotShare * 100, 0)}%`;
  return (
    `${shape}, ${length} · ${c.clients.length} client${c.clients.length === 1 ? '' : 's'} · ` +
    `${int(c.accounts)} accounts (${hot}, ${dec(c.erc20Share * 100, 0)}% ERC-20)`
  );
}

/** The Markdown summary of `r` (what summary.md holds and the CLI prints). */
export function summaryMarkdown(r: LoadResult): string {
  const n = r.counts;
  const l = r.latencyMs;
  const w = r.witness;
  const rows: [string, string][] = [
    ['committed tx/s', dec(r.throughput.committedPerSecond)],
    ['offered tx/s (generated)', dec(r.throughput.offeredPerSecond)],
    ['peak committed tx/s (1 s)', int(r.throughput.peakCommittedPerSecond)],
    ['committed per second after warm-up', describeSteadiness(runSteadiness(r))],
    [
      'submit→inclusion latency p50 / p95 / p99',
      l === null ? 'n/a' : `${ms(l.p50)} / ${ms(l.p95)} / ${ms(l.p99)} ms`,
    ],
    ['latency mean / max', l === null ? 'n/a' : `${ms(l.mean)} / ${ms(l.max)} ms`],
    ['generated', int(n.generated)],
    ['submitted', int(n.submitted)],
    ['accepted', int(n.accepted)],
    ['committed', int(n.committed)],
    [
      `rejected (${REFUSERS.join(' / ')})`,
      `${int(n.rejected)} (${REFUSERS.map((k) => int(n.rejectedBy[k])).join(' / ')})`,
    ],
    ['stale-abandoned', int(n.staleAbandoned)],
    ['failed (fate unknown)', int(n.failed)],
    ['dropped (accepted, never committed)', int(n.dropped)],
    ['unanswered', int(n.unanswered)],
    ['unsent', int(n.unsent)],
    ['renumbered after a refusal', int(n.renumbered)],
  ];
  if (r.config.mode === 'open') rows.push(['missed (too many outstanding)', int(n.missed)]);
  rows.push([
    'witness bytes / tx (bag / unbagged / proofs fetched)',
    w === null
      ? r.witnessError === undefined
        ? 'n/a (no --metrics)'
        : `n/a (${cell(r.witnessError)})`
      : `${bytes(w.bagBytesPerTx)} / ${bytes(w.unbaggedWitnessBytesPerTx)} / ${bytes(w.proofBytesFetchedPerTx)}`,
  ]);
  if (w !== null)
    rows.push([
      "clients' calls / tx (storage BatchGet / miner Submit)",
      `${calls(w.storageCallsPerTx)} / ${calls(w.submissionsPerTx)}`,
    ]);
  rows.push([
    'blocks seen (with run txs, reorgs)',
    `${int(r.blocks.seen)} (${int(r.blocks.withRunTxs)}, ${int(r.blocks.reorgs)})`,
  ]);
  rows.push([
    'run / drain',
    `${dec(r.timing.runMs / 1000)} s / ${dec(r.timing.drainMs / 1000)} s${r.timing.drainTimedOut ? ' (timed out)' : ''}, ended by ${r.timing.stoppedBy}`,
  ]);
  const lines = [
    `# Monsoon load run, ${r.startedAt}`,
    '',
    describeLoad(r),
    '',
    '| metric | value |',
    '| --- | ---: |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
  ];
  if (r.reasons.length > 0) {
    lines.push('', '## Refusals and failures', '');
    for (const g of r.reasons) {
      const samples = g.samples.map((s) => `\`${cell(s.reason)}\` ×${int(s.count)}`).join('; ');
      lines.push(`- **${g.by}** (${int(g.count)}): ${samples}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
