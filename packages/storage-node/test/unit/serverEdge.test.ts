/**
 * The pure parts of the network edge: which status each error gets, the Prometheus text the
 * registry renders, host:port parsing, and how CLI flags, a config file and defaults combine.
 */

import { status } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { DsmError, DsmErrorCode } from '@monsoon/dsm-tree';
import { ProtocolError, ProtocolErrorCode } from '@monsoon/protocol';
import {
  CallRefused,
  grpcStatusOf,
  MetricsRegistry,
  parseHostPort,
  StorageError,
  StorageErrorCode,
} from '@monsoon/storage-node';
import { configFromFile, resolveStorageConfig } from '../../src/cli/storageConfig.js';

describe('grpcStatusOf', () => {
  const expected: Record<StorageErrorCode, status> = {
    [StorageErrorCode.UnknownVersion]: status.NOT_FOUND,
    [StorageErrorCode.UnknownParent]: status.FAILED_PRECONDITION,
    [StorageErrorCode.WrongShard]: status.INVALID_ARGUMENT,
    [StorageErrorCode.BadBlock]: status.INVALID_ARGUMENT,
    [StorageErrorCode.ShardRootMismatch]: status.INVALID_ARGUMENT,
    [StorageErrorCode.StateRootMismatch]: status.INVALID_ARGUMENT,
    [StorageErrorCode.BadArgument]: status.INVALID_ARGUMENT,
    [StorageErrorCode.RecordTooLarge]: status.INVALID_ARGUMENT,
    [StorageErrorCode.Closed]: status.UNAVAILABLE,
    [StorageErrorCode.WalCorrupt]: status.INTERNAL,
    [StorageErrorCode.WalTruncated]: status.INTERNAL,
    [StorageErrorCode.WalFailed]: status.INTERNAL,
    [StorageErrorCode.CheckpointCorrupt]: status.INTERNAL,
    [StorageErrorCode.CheckpointSeqRegress]: status.INTERNAL,
    [StorageErrorCode.BadGenesis]: status.INTERNAL,
  };

  it.each(Object.values(StorageErrorCode))('StorageError %s', (code) => {
    const s = grpcStatusOf(new StorageError(code, 'what was expected, what was found'));
    expect(s).toEqual({
      code: expected[code] ?? status.INTERNAL,
      details: `${code}: what was expected, what was found`,
      errorCode: code,
      internal: (expected[code] ?? status.INTERNAL) === status.INTERNAL,
    });
  });

  it('ProtocolError is INVALID_ARGUMENT with its message', () => {
    const e = new ProtocolError(ProtocolErrorCode.BadLength, 'address: expected 20 bytes, found 19');
    expect(grpcStatusOf(e)).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'BAD_LENGTH: address: expected 20 bytes, found 19',
      errorCode: 'BAD_LENGTH',
      internal: false,
    });
  });

  it('a tree error from the input is INVALID_ARGUMENT; one from the tree itself and a plain Error are INTERNAL', () => {
    expect(grpcStatusOf(new DsmError(DsmErrorCode.BadValue, 'storage value over 32 bytes')).code).toBe(
      status.INVALID_ARGUMENT,
    );
    expect(grpcStatusOf(new DsmError(DsmErrorCode.MissingNode, 'stub'))).toMatchObject({
      code: status.INTERNAL,
      internal: true,
    });
    expect(grpcStatusOf(new RangeError('oops'))).toEqual({
      code: status.INTERNAL,
      details: 'internal error: oops',
      errorCode: undefined,
      internal: true,
    });
  });

  it('CallRefused carries its own status', () => {
    expect(
      grpcStatusOf(new CallRefused(status.NOT_FOUND, 'UNKNOWN_CODE', 'code 00 is not held here')),
    ).toEqual({
      code: status.NOT_FOUND,
      details: 'UNKNOWN_CODE: code 00 is not held here',
      errorCode: 'UNKNOWN_CODE',
      internal: false,
    });
  });
});

describe('MetricsRegistry', () => {
  it('renders counters with escaped labels, cumulative histogram buckets, and gauges read on scrape', async () => {
    const r = new MetricsRegistry();
    const c = r.counter('x_total', 'Things.');
    c.inc({ method: 'A', code: 'OK' });
    c.inc({ method: 'A', code: 'OK' }, 2);
    c.inc({ method: 'say "hi"\\\n' });
    const h = r.histogram('x_seconds', 'Time.', [1, 0.1]);
    h.observe({ m: 'A' }, 0.05);
    h.observe({ m: 'A' }, 0.5);
    h.observe({ m: 'A' }, 5);
    let g = 1;
    r.gauge('x_gauge', 'Level.', () => g++);
    r.gauge('x_broken', 'Fails.', () => {
      throw new Error('unreadable');
    });
    expect(await r.render()).toBe(
      [
        '# HELP x_total Things.',
        '# TYPE x_total counter',
        'x_total{method="A",code="OK"} 3',
        'x_total{method="say \\"hi\\"\\\\\\n"} 1',
        '# HELP x_seconds Time.',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{m="A",le="0.1"} 1',
        'x_seconds_bucket{m="A",le="1"} 2',
        'x_seconds_bucket{m="A",le="+Inf"} 3',
        'x_seconds_sum{m="A"} 5.55',
        'x_seconds_count{m="A"} 3',
        '# HELP x_gauge Level.',
        '# TYPE x_gauge gauge',
        'x_gauge 1',
        '',
      ].join('\n'),
    );
    expect(await r.render()).toContain('x_gauge 2\n');
  });

  it('refuses a name twice or a name Prometheus does not allow', () => {
    const r = new MetricsRegistry();
    r.counter('a_total', 'A.');
    expect(() => r.counter('a_total', 'A.')).toThrow(/BAD_ARGUMENT: metric name "a_total"/);
    expect(() => r.gauge('a-b', 'B.', () => 1)).toThrow(/BAD_ARGUMENT: metric name "a-b"/);
  });
});

describe('parseHostPort', () => {
  it('reads host:port and [v6]:port, refuses anything else', () => {
    expect(parseHostPort('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseHostPort('localhost:50051')).toEqual({ host: 'localhost', port: 50051 });
    expect(parseHostPort('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    for (const bad of ['127.0.0.1', ':80', 'host:65536', 'a b:1', '::1:80']) {
      expect(() => parseHostPort(bad)).toThrow(StorageError);
    }
  });
});

describe('storage CLI options', () => {
  it('defaults', () => {
    expect(resolveStorageConfig({ genesis: 'g.json' })).toEqual({
      genesis: 'g.json',
      shardSpec: 'all',
      shards: Array.from({ length: 16 }, (_, i) => i),
      shardCount: 16,
      listen: '127.0.0.1:50051',
      dataDir: './data/storage-all',
      fsync: 'always',
      checkpointEvery: 1024,
      window: 256,
      forkWindow: 64,
      metrics: undefined,
      logLevel: 'info',
      maxMessageBytes: 64 * 1024 * 1024,
      maxBatch: 10_000,
    });
  });

  it('flags over the config file; config paths relative to the file; kebab-case keys', () => {
    const file = configFromFile(
      {
        genesis: 'g.json',
        'data-dir': 'd',
        shards: [3, 1, 2],
        'shard-count': 256,
        window: 8,
        metrics: 'off',
      },
      '/etc/monsoon/storage.json',
    );
    const cfg = resolveStorageConfig({ window: '16', listen: '0.0.0.0:0' }, file);
    expect(cfg).toMatchObject({
      genesis: '/etc/monsoon/g.json',
      dataDir: '/etc/monsoon/d',
      shards: [1, 2, 3],
      shardCount: 256,
      window: 16,
      listen: '0.0.0.0:0',
      metrics: undefined,
    });
    expect(resolveStorageConfig({ genesis: 'g', shards: '0-3,8' }).dataDir).toBe('./data/storage-0-3_8');
  });
});
