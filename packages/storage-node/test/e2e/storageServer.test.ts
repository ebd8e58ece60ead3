/**
 * StorageServer in process, on a real socket (127.0.0.1:0) over an in-memory StorageNode:
 * SubscribeHeads streams the current head then every new one to each subscriber and forgets a
 * cancelled one; an unexpected error is INTERNAL, logged and counted; close() ends streams and
 * waits for an ApplyBlock in progress; the metrics server serves what the server counted.
 */

import { type ClientReadableStream, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import { MetricsServer } from '@monsoon/edge';
import {
  applyBlockRequestToProto,
  type commonPb,
  getAccountRequestToProto,
  HEAD,
  type Head,
  headFromProto,
  type StorageServiceClient,
} from '@monsoon/protocol';
import { StorageMetrics, StorageNode, StorageServer } from '@monsoon/storage-node';
import { type Block, makeGenesis, RefChain } from '../helpers/chain.js';
import { errorCodeOf, expectStatus, storageClient, unary } from '../helpers/grpcClient.js';
import { RecordingLogger } from '../helpers/recordingLogger.js';

const genesis = makeGenesis(21, 120);
const chain = new RefChain(genesis, 16);

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function serve() {
  const node = StorageNode.fromGenesis(chain.genesis, { shardCount: 16 });
  const metrics = new StorageMetrics();
  metrics.watchNode(node);
  const logger = new RecordingLogger();
  const server = await StorageServer.create({ listen: '127.0.0.1:0' }, { node, logger, metrics });
  const client = storageClient(server.address());
  cleanup.push(
    () => server.close(),
    () => client.close(),
  );
  return { node, server, client, metrics, logger };
}

function blocks(n: number): Block[] {
  const out: Block[] = [];
  let parent = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
  for (let i = 0; i < n; i++) {
    const b = chain.block(parent, 500 + i, 30);
    out.push(b);
    parent = { hash: b.hash, state: b.state, number: b.header.number };
  }
  return out;
}
const chainOf4 = blocks(4);

/** Collects a head stream; `next()` resolves with the next head. */
function heads(stream: ClientReadableStream<commonPb.Head>) {
  const got: Head[] = [];
  const waiting: ((h: Head) => void)[] = [];
  stream.on('data', (h: commonPb.Head) => {
    const head = headFromProto(h);
    got.push(head);
    waiting.shift()?.(head);
  });
  stream.on('error', () => {});
  let taken = 0;
  return {
    got,
    next: (): Promise<Head> => {
      const i = taken++;
      if (i < got.length) return Promise.resolve(got[i]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

const apply = (client: StorageServiceClient, b: Block) =>
  unary(client, client.applyBlock, applyBlockRequestToProto(b.req, { shardCount: 16 }));

describe('StorageServer over a real socket', () => {
  it('SubscribeHeads: the current head, then every new head, to every subscriber', async () => {
    const { client, server } = await serve();
    expect(server.address()).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
    const a = heads(client.subscribeHeads({}));
    const bStream = client.subscribeHeads({});
    const b = heads(bStream);
    expect(toHex((await a.next()).hash)).toBe(toHex(chain.genesisHash));
    expect(toHex((await b.next()).hash)).toBe(toHex(chain.genesisHash));
    expect(server.heads.subscribers).toBe(2);

    await apply(client, chainOf4[0]!);
    await apply(client, chainOf4[1]!);
    for (const s of [a, b]) {
      const h1 = await s.next();
      const h2 = await s.next();
      expect([h1.number, h2.number]).toEqual([1n, 2n]);
      expect(toHex(h2.hash)).toBe(toHex(chainOf4[1]!.hash));
      expect(toHex(h2.stateRoot)).toBe(toHex(chainOf4[1]!.header.stateRoot));
    }
    // Re-applying a held block moves nothing, so nothing is sent.
    await apply(client, chainOf4[1]!);

    bStream.cancel();
    await apply(client, chainOf4[2]!);
    expect((await a.next()).number).toBe(3n);
    expect(a.got.map((h) => h.number)).toEqual([0n, 1n, 2n, 3n]);
    expect(b.got.map((h) => h.number)).toEqual([0n, 1n, 2n]);
    expect(server.heads.subscribers).toBe(1);
  });

  it('an unexpected error is INTERNAL, logged and counted; the server keeps serving', async () => {
    const { client, node, logger, metrics } = await serve();
    const getAccount = node.getAccount.bind(node);
    node.getAccount = () => {
      throw new TypeError('cannot read properties of undefined');
    };
    const req = getAccountRequestToProto({ address: genesis.alloc[0]!.address, at: HEAD, omitLevels: 0 });
    const e = await expectStatus(
      unary(client, client.getAccount, req),
      status.INTERNAL,
      'internal error: cannot read properties of undefined',
    );
    expect(errorCodeOf(e)).toBeUndefined();
    expect(logger.errors).toEqual([
      {
        level: 'error',
        msg: 'call failed',
        meta: expect.objectContaining({ method: 'GetAccount', error: 'cannot read properties of undefined' }),
      },
    ]);
    expect(metrics.requestCount('GetAccount', 'INTERNAL')).toBe(1);
    node.getAccount = getAccount;
    await unary(client, client.getAccount, req);
    expect(metrics.requestCount('GetAccount', 'OK')).toBe(1);
  });

  it('close() ends head streams, lets an ApplyBlock in progress finish, then refuses calls', async () => {
    const { client, server, node } = await serve();
    const s = client.subscribeHeads({});
    const ended = new Promise<string>((resolve) => {
      s.on('end', () => resolve('end'));
      s.on('error', (err) => resolve(`error ${err.message}`));
    });
    const h = heads(s);
    await h.next();
    // Close once the node has started on the ApplyBlock.
    const started = new Promise<void>((resolve) => {
      const original = node.applyBlock.bind(node);
      node.applyBlock = (req) => {
        resolve();
        return original(req);
      };
    });
    const applying = apply(client, chainOf4[0]!);
    await started;
    await server.close();
    expect(await ended).toBe('end');
    expect(toHex((await applying).blockHash)).toBe(toHex(chainOf4[0]!.hash));
    expect(node.head.header.number).toBe(1n);
    await expectStatus(apply(client, chainOf4[1]!), status.UNAVAILABLE);
  });

  it('the metrics server serves the registry as Prometheus text', async () => {
    const { client, metrics } = await serve();
    await apply(client, chainOf4[0]!);
    const http = await MetricsServer.create({ listen: '127.0.0.1:0' }, { registry: metrics.registry });
    cleanup.push(() => http.close());
    const res = await fetch(`http://${http.address()}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('monsoon_storage_requests_total{method="ApplyBlock",code="OK"} 1\n');
    expect(text).toContain('monsoon_storage_head_number 1\n');
    expect(text).toContain('monsoon_storage_versions 2\n');
    expect(text).toMatch(/monsoon_storage_request_seconds_bucket\{method="ApplyBlock",le="\+Inf"\} 1\n/);
    expect(text).not.toContain('monsoon_storage_wal_bytes'); // no data directory given
  });
});
