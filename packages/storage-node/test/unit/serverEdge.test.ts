/**
 * The storage node's side of the network edge: which status each error gets, and how CLI
 * flags, a config file and defaults combine. (The registry, host:port parsing and the status
 * mapping itself are tested in packages/edge.)
 */

import { resolve } from 'node:path';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import { DsmError, DsmErrorCode } from '@monsoon/dsm-tree';
import { ProtocolError, ProtocolErrorCode } from '@monsoon/protocol';
import { grpcStatusOf, StorageError, StorageErrorCode } from '@monsoon/storage-node';
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
    [StorageErrorCode.Unavailable]: status.UNAVAILABLE,
    [StorageErrorCode.CorruptNode]: status.DATA_LOSS,
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
    const e = new ProtocolError(ProtocolErrorCode.BadLength, 'address: expected 20 bytes, found 19', {
      field: 'address',
      expected: '20 bytes',
      found: '19',
    });
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
      checkpointDepth: 16,
      replicas: [],
      syncInterval: 1000,
      window: 256,
      forkWindow: 64,
      maxVersionUpdates: 131_072,
      metrics: undefined,
      logLevel: 'info',
      maxMessageBytes: 64 * 1024 * 1024,
      maxBatch: 10_000,
      backend: 'memory',
      memoryBudget: 2 * 1024 ** 3,
      leveldb: undefined,
      maxNodes: 1024,
      exportRegion: undefined,
      regionMb: 2048,
    });
    expect(resolveStorageConfig({ genesis: 'g.json', exportRegion: 'auto' }).exportRegion).toBe('auto');
    expect(resolveStorageConfig({ genesis: 'g.json', exportRegion: 'r.region' }).exportRegion).toBe(
      resolve('r.region'),
    );
  });

  it('the tiered backend: a byte count with a unit, a LevelDB address; bad ones refused naming the flag', () => {
    const cfg = resolveStorageConfig({
      genesis: 'g.json',
      backend: 'tiered',
      memoryBudget: '512MiB',
      leveldb: '10.0.0.5:7000',
    });
    expect([cfg.backend, cfg.memoryBudget, cfg.leveldb]).toEqual([
      'tiered',
      512 * 1024 ** 2,
      '10.0.0.5:7000',
    ]);
    expect(resolveStorageConfig({ genesis: 'g.json', memoryBudget: '1e9' }).memoryBudget).toBe(1e9);
    expect(() => resolveStorageConfig({ genesis: 'g.json', memoryBudget: '2 GB!' })).toThrow(
      '--memory-budget: expected a positive byte count such as 2GiB, 512MiB or 1e9, found "2 GB!"',
    );
    expect(() => resolveStorageConfig({ genesis: 'g.json', backend: 'disk' })).toThrow(/--backend/);
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
