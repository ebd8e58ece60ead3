/**
 * Witness bytes as the clients count them, from their Prometheus `/metrics`: read before and
 * after a run, the difference over the committed transactions is what each transaction cost
 * in witness traffic.
 */
import { formatHostPort, parseHostPort } from '@monsoon/edge';
import { DriverError, DriverErrorCode } from './driverError.js';

/** The client counters the driver reads, by the name its reports use. */
export const WITNESS_METRICS = {
  /** Bag bytes sent to miners (compacted and deduplicated). */
  bagBytes: 'monsoon_client_bag_bytes_total',
  /** What the same witnesses would take sent per transaction (compacted, not bagged). */
  unbaggedWitnessBytes: 'monsoon_client_witness_bytes_unbagged_total',
  /** Proof bytes the clients fetched from the storage nodes. */
  proofBytesFetched: 'monsoon_client_proof_bytes_fetched_total',
  /** BatchGet calls the clients made to storage nodes (each ~0.1–0.2 ms of a client's CPU, whatever it carries). */
  storageCalls: 'monsoon_client_storage_calls_total',
  /** Submit calls the clients made to miners. */
  submissions: 'monsoon_client_submissions_total',
} as const;

/** The witness counters summed over the clients scraped. */
export type WitnessCounters = { -readonly [K in keyof typeof WITNESS_METRICS]: number };

/** `host:port` → `http://host:port/metrics`; a URL without a path gets `/metrics`. */
export function metricsUrl(endpoint: string): string {
  const s = endpoint.trim();
  if (/^https?:\/\//i.test(s)) {
    const u = new URL(s);
    if (u.pathname === '/' || u.pathname === '') u.pathname = '/metrics';
    return u.toString();
  }
  try {
    return `http://${formatHostPort(parseHostPort(s, 'metrics'))}/metrics`;
  } catch {
    throw new DriverError(
      DriverErrorCode.BadEndpoint,
      `metrics endpoint ${JSON.stringify(endpoint)}: expected host:port or an http(s):// URL`,
      { found: endpoint },
    );
  }
}

/**
 * The value of every sample in Prometheus text format, summed per metric name (over label sets).
 * Comments, blank lines and unparsable values are skipped.
 */
export function parsePrometheusText(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const v = Number(m[2]);
    if (!Number.isFinite(v)) continue;
    sums.set(m[1]!, (sums.get(m[1]!) ?? 0) + v);
  }
  return sums;
}

/** Reads every endpoint's `/metrics` and sums the witness counters (a counter a client lacks counts 0). */
export async function scrapeWitnessCounters(
  endpoints: readonly string[],
  timeoutMs = 5_000,
): Promise<WitnessCounters> {
  const texts = await Promise.all(
    endpoints.map(async (e) => {
      const url = metricsUrl(e);
      let res: Response;
      try {
        res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw unavailable(url, (err as Error).message);
      }
      if (!res.ok) throw unavailable(url, `HTTP ${res.status}`);
      return res.text();
    }),
  );
  const out: WitnessCounters = {
    bagBytes: 0,
    unbaggedWitnessBytes: 0,
    proofBytesFetched: 0,
    storageCalls: 0,
    submissions: 0,
  };
  for (const text of texts) {
    const sums = parsePrometheusText(text);
    for (const k of Object.keys(WITNESS_METRICS) as (keyof WitnessCounters)[])
      out[k] += sums.get(WITNESS_METRICS[k]) ?? 0;
  }
  return out;
}

function unavailable(url: string, why: string): DriverError {
  return new DriverError(DriverErrorCode.MetricsUnavailable, `GET ${url}: expected metrics, found ${why}`, {
    url,
  });
}
