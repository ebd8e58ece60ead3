/** Parsers for the workload CLI's flag values; each throws a {@link UsageError} naming the flag. */

/** A bad command line: printed as one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `60s`, `500ms`, `2m`, `1h`, or a bare number of seconds → milliseconds (> 0). */
export function parseDuration(flag: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m?.[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = m ? Number(m[1]) * unit : Number.NaN;
  if (!(ms > 0)) throw new UsageError(`${flag}: expected a duration such as 60s, 500ms or 2m, found "${v}"`);
  return ms;
}

/** A positive integer: `100000`, `100_000`, `100k`, `1M` (k = 1,000, M = 1,000,000). */
export function parseCount(flag: string, v: string): number {
  const m = /^(\d[\d_]*)(k|K|M)?$/.exec(v.trim());
  const n = m
    ? Number(m[1]!.replace(/_/g, '')) * (m[2] === undefined ? 1 : m[2] === 'M' ? 1e6 : 1e3)
    : Number.NaN;
  if (!(Number.isSafeInteger(n) && n >= 1))
    throw new UsageError(`${flag}: expected a positive integer such as 100000, 100k or 1M, found "${v}"`);
  return n;
}

/** A positive number (a rate in tx/s). */
export function parsePositive(flag: string, v: string): number {
  const n = Number(v.replace(/_/g, ''));
  if (!(Number.isFinite(n) && n > 0)) throw new UsageError(`${flag}: expected a number > 0, found "${v}"`);
  return n;
}

/** A share in [0, 1]: `0.15` or `15%`. */
export function parseShare(flag: string, v: string): number {
  const t = v.trim();
  const n = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (!(n >= 0 && n <= 1))
    throw new UsageError(`${flag}: expected a share in [0, 1] such as 0.15 or 15%, found "${v}"`);
  return n;
}

/** A comma-separated list, blanks dropped; at least one item. */
export function parseList(flag: string, v: string): string[] {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new UsageError(`${flag}: expected a comma-separated list, found "${v}"`);
  return items;
}

/** A chain id: a positive integer. */
export function parseChainId(flag: string, v: string): bigint {
  if (!/^\d+$/.test(v.trim()) || BigInt(v.trim()) < 1n)
    throw new UsageError(`${flag}: expected a positive integer, found "${v}"`);
  return BigInt(v.trim());
}
