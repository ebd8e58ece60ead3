/**
 * The load driver's parts: nearest-rank percentiles, re-signing under another nonce (byte for
 * byte what signing those fields directly gives), Prometheus parsing, endpoint parsing, and
 * the CLI's flag parsers.
 */
import { describe, expect, it } from '@jest/globals';
import { makeCommon } from '@monsoon/execution';
import {
  AccountSet,
  DEFAULT_TOKEN_ADDRESS,
  DriverErrorCode,
  encodeTokenTransfer,
  isDriverError,
  metricsUrl,
  parseClientEndpoint,
  parsePrometheusText,
  percentile,
  resignWithNonce,
  signTransaction,
  summarizeLatency,
  TrafficGenerator,
} from '@monsoon/workload';
import {
  parseChainId,
  parseCount,
  parseDuration,
  parseList,
  parseShare,
  UsageError,
} from '../../src/cli/args.js';

describe('percentile (nearest rank)', () => {
  const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);

  it('picks the smallest value with p% at or below it', () => {
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 50)).toBe(7);
    expect(percentile([1, 2, 3], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes unsorted values without touching them', () => {
    const values = [30, 10, 20, 40];
    expect(summarizeLatency(values)).toEqual({ samples: 4, p50: 20, p95: 40, p99: 40, mean: 25, max: 40 });
    expect(values).toEqual([30, 10, 20, 40]);
    expect(summarizeLatency([])).toBeUndefined();
  });
});

describe('resignWithNonce', () => {
  it('gives what signing the same fields under the new nonce gives, for both transaction types', async () => {
    const accounts = await AccountSet.create({
      seed: new TextEncoder().encode('resign'),
      count: 10,
      eager: true,
    });
    const common = makeCommon(1337n);
    for (const txType of ['eip1559', 'legacy'] as const) {
      const gen = new TrafficGenerator({ txType, erc20Share: 0.5 }, { accounts });
      for (const tx of gen.take(20)) {
        const o = gen.options;
        const to = tx.kind === 'erc20' ? DEFAULT_TOKEN_ADDRESS : accounts.address(tx.to);
        const data =
          tx.kind === 'erc20'
            ? encodeTokenTransfer(accounts.address(tx.to), tx.tokenAmount)
            : new Uint8Array(0);
        const gasLimit = tx.kind === 'erc20' ? o.tokenGasLimit : o.transferGasLimit;
        const base = { chainId: 1337n, nonce: tx.nonce + 7n, gasLimit, to, value: tx.value, data };
        const expected =
          txType === 'eip1559'
            ? signTransaction(
                {
                  type: 'eip1559',
                  ...base,
                  maxFeePerGas: o.maxFeePerGas,
                  maxPriorityFeePerGas: o.maxPriorityFeePerGas,
                },
                accounts.privateKey(tx.from),
              )
            : signTransaction(
                { type: 'legacy', ...base, gasPrice: o.gasPrice },
                accounts.privateKey(tx.from),
              );
        const got = resignWithNonce(tx.raw, tx.nonce + 7n, accounts.privateKey(tx.from), common);
        expect(Buffer.from(got.raw).toString('hex')).toBe(Buffer.from(expected.raw).toString('hex'));
        expect(Buffer.from(got.hash).toString('hex')).toBe(Buffer.from(expected.hash).toString('hex'));
      }
    }
  });
});

describe('witness metrics', () => {
  it('sums each metric over its label sets and skips comments', () => {
    const sums = parsePrometheusText(
      [
        '# HELP monsoon_client_bag_bytes_total Bytes.',
        '# TYPE monsoon_client_bag_bytes_total counter',
        'monsoon_client_bag_bytes_total 1200',
        'monsoon_client_proof_bytes_fetched_total{shard="0"} 10',
        'monsoon_client_proof_bytes_fetched_total{shard="1",x="a b"} 32.5 1700000000000',
        'monsoon_client_witness_bytes_unbagged_total NaN',
        '',
      ].join('\n'),
    );
    expect(sums.get('monsoon_client_bag_bytes_total')).toBe(1200);
    expect(sums.get('monsoon_client_proof_bytes_fetched_total')).toBe(42.5);
    expect(sums.has('monsoon_client_witness_bytes_unbagged_total')).toBe(false);
  });

  it('turns host:port into the /metrics URL and keeps an explicit path', () => {
    expect(metricsUrl('127.0.0.1:9100')).toBe('http://127.0.0.1:9100/metrics');
    expect(metricsUrl('http://h:1')).toBe('http://h:1/metrics');
    expect(metricsUrl('http://h:1/custom')).toBe('http://h:1/custom');
    expect(() => metricsUrl('nope')).toThrow(/host:port/);
  });
});

describe('parseClientEndpoint', () => {
  it('reads host:port as gRPC and an http(s) URL as JSON-RPC', () => {
    expect(parseClientEndpoint('127.0.0.1:7200')).toEqual({ kind: 'grpc', address: '127.0.0.1:7200' });
    expect(parseClientEndpoint('[::1]:7200')).toEqual({ kind: 'grpc', address: '[::1]:7200' });
    expect(parseClientEndpoint('http://127.0.0.1:8545')).toEqual({
      kind: 'jsonrpc',
      url: 'http://127.0.0.1:8545/',
    });
  });

  it('refuses anything else with BAD_ENDPOINT', () => {
    for (const s of ['localhost', 'ftp://x:1', 'http://', ':80']) {
      let err: unknown;
      try {
        parseClientEndpoint(s);
      } catch (e) {
        err = e;
      }
      expect(isDriverError(err, DriverErrorCode.BadEndpoint)).toBe(true);
    }
  });
});

describe('CLI flag parsers', () => {
  it('parses durations, counts, shares, lists and chain ids', () => {
    expect(parseDuration('--duration', '60s')).toBe(60_000);
    expect(parseDuration('--duration', '500ms')).toBe(500);
    expect(parseDuration('--duration', '2m')).toBe(120_000);
    expect(parseDuration('--duration', '1.5')).toBe(1_500);
    expect(parseCount('--accounts', '100_000')).toBe(100_000);
    expect(parseCount('--accounts', '100k')).toBe(100_000);
    expect(parseCount('--accounts', '1M')).toBe(1_000_000);
    expect(parseShare('--erc20-share', '15%')).toBeCloseTo(0.15);
    expect(parseShare('--erc20-share', '0.2')).toBe(0.2);
    expect(parseList('--clients', 'a:1, b:2,,')).toEqual(['a:1', 'b:2']);
    expect(parseChainId('--chain-id', '1337')).toBe(1337n);
  });

  it('names the flag and the value it refuses', () => {
    expect(() => parseDuration('--duration', '0s')).toThrow(UsageError);
    expect(() => parseDuration('--duration', 'soon')).toThrow(/--duration: .* found "soon"/);
    expect(() => parseCount('--count', '-3')).toThrow(/--count/);
    expect(() => parseCount('--count', '1.5')).toThrow(/--count/);
    expect(() => parseShare('--hot-share', '1.5')).toThrow(/--hot-share/);
    expect(() => parseList('--clients', ' , ')).toThrow(/--clients/);
    expect(() => parseChainId('--chain-id', '0')).toThrow(/--chain-id/);
  });
});
