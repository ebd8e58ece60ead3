/**
 * Stale answers are answered by pre-executing again once the state head moved, a bounded number
 * of times: a transaction a miner keeps calling stale is resubmitted exactly `maxStaleRetries`
 * times, each only after waiting for the state to move, then given up (STALE_RETRIES); one that
 * is stale once goes through on the next submission. In process: a storage stand-in serving a
 * real state tree, a miner stand-in answering from a script, the chain held at one block.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type ChainFollower,
  type ChainView,
  type ClientBlock,
  ClientErrorCode,
  defaultSubmitQueueOptions,
  isClientError,
  MinerPool,
  RemoteState,
  ShardedStorage,
  type SubmitCounters,
  SubmitQueue,
} from '@monsoon/client';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { decodeSignedTx, defaultChainRules, EvmPool, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  MinerServiceDefinition,
  type minerPb,
  submitRequestFromProto,
  submitResponseToProto,
  TxStatus,
} from '@monsoon/protocol';
import { rejection } from '@monsoon/test-utils';
import { serveStorage } from '../helpers/storageStandIn.js';

const rules = { ...defaultChainRules, chainId: 1337n };
const common = makeCommon(rules.chainId);
const key = keccak.keccak256(Uint8Array.of(4, 2));
const sender = privateToAddress(key);
const key2 = keccak.keccak256(Uint8Array.of(4, 3));
const sender2 = privateToAddress(key2);
const recipient = new Uint8Array(20).fill(0x42);
const state = new StateTree();
state.putAccount(sender, makeAccount({ balance: 10n ** 20n }));
state.putAccount(sender2, makeAccount({ balance: 10n ** 20n }));
state.putAccount(recipient, makeAccount({ balance: 1n }));
const blockHash = new Uint8Array(32).fill(0xbb);
const head = {
  hash: blockHash,
  header: {
    number: 1n,
    stateRoot: state.root(),
    timestamp: 1n,
    miner: new Uint8Array(20).fill(0xc0),
    gasLimit: rules.gasLimit,
  },
} as unknown as ClientBlock;

/** What happened, in order: a submission reached the miner, or the queue waited for the state to move. */
let events: ('submit' | 'wait')[] = [];
/** The miner's answer to the n-th submission of a test (0-based). */
let script: (n: number) => TxStatus = () => TxStatus.Stale;

const servers: Server[] = [];
let storageAddress: string;
let minerAddress: string;

async function serveMiner(): Promise<string> {
  const server = new Server();
  server.addService(MinerServiceDefinition, {
    submit(call: ServerUnaryCall<minerPb.SubmitRequest, unknown>, cb: sendUnaryData<minerPb.SubmitResponse>) {
      const req = submitRequestFromProto(call.request);
      const status = script(events.filter((e) => e === 'submit').length);
      events.push('submit');
      cb(
        null,
        submitResponseToProto({
          results: req.transactions.map((raw) => ({
            txHash: keccak.keccak256(raw),
            status,
            reason: status === TxStatus.Stale ? 'witness of an older state' : '',
            staleKeys: [],
          })),
        }),
      );
    },
  } as never);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return `127.0.0.1:${port}`;
}

beforeAll(async () => {
  const s = await serveStorage(state, blockHash);
  servers.push(s.server);
  storageAddress = s.address;
  minerAddress = await serveMiner();
});
afterAll(() => {
  for (const s of servers) s.forceShutdown();
});

async function queue(
  maxStaleRetries: number,
  batchWindowMs = defaultSubmitQueueOptions.batchWindowMs,
  onPreExecuted?: () => void,
): Promise<{ q: SubmitQueue; counters: SubmitCounters }> {
  const storage = await ShardedStorage.connect([storageAddress]);
  const remote = new RemoteState(storage, { compactLevels: 1, maxCachedNodes: 1_000_000 });
  const counters: SubmitCounters = {
    accepted: 0,
    rejectedEarly: 0,
    rejectedByMiner: 0,
    staleReplies: 0,
    abandoned: 0,
    submissions: 0,
    bagBytes: 0,
    unbaggedWitnessBytes: 0,
    rawWitnessBytes: 0,
  };
  // The chain stays at one block; "the state moved" is answered at once (as if it had).
  const follower = {
    stateHead: () => head,
    stateChange: async () => {
      events.push('wait');
    },
  } as unknown as ChainFollower;
  const q = new SubmitQueue(
    { ...defaultSubmitQueueOptions, rules, maxStaleRetries, batchWindowMs },
    {
      remote,
      chain: { requireHead: () => head } as unknown as ChainView,
      follower,
      miners: new MinerPool([minerAddress]),
      common,
      evms: new EvmPool(common),
      counters,
      ...(onPreExecuted === undefined ? {} : { onPreExecuted }),
    },
  );
  return { q, counters };
}

function signedTransfer(from = key) {
  const raw = createFeeMarket1559Tx(
    {
      nonce: 0n,
      to: recipient,
      value: 5n,
      gasLimit: 21_000n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1n,
    },
    { common },
  )
    .sign(from)
    .serialize();
  return { tx: decodeSignedTx(raw, common), raw };
}

describe('stale answers', () => {
  it('are resubmitted maxStaleRetries times, each after the state moved, then given up', async () => {
    events = [];
    script = () => TxStatus.Stale;
    const { q, counters } = await queue(3);
    const { tx, raw } = signedTransfer();
    const e = await rejection(q.send(tx, sender, raw));
    expect(isClientError(e, ClientErrorCode.StaleRetries)).toBe(true);
    expect(events).toEqual(['submit', 'wait', 'submit', 'wait', 'submit', 'wait', 'submit']);
    expect(counters).toMatchObject({ staleReplies: 4, abandoned: 1, accepted: 0, submissions: 4 });
  });

  it('that come once are followed by one resubmission that goes through', async () => {
    events = [];
    script = (n) => (n === 0 ? TxStatus.Stale : TxStatus.Accepted);
    const { q, counters } = await queue(3);
    const { tx, raw } = signedTransfer();
    await q.send(tx, sender, raw);
    expect(events).toEqual(['submit', 'wait', 'submit']);
    expect(counters).toMatchObject({ staleReplies: 1, abandoned: 0, accepted: 1, submissions: 2 });
  });
});

describe('the batching window', () => {
  for (const [window, submissions] of [
    [1_000, 1],
    [0, 2],
  ] as const) {
    it(`of ${window} ms gives ${submissions} submission(s) for two transactions pre-executed a storage round apart`, async () => {
      events = [];
      script = () => TxStatus.Accepted;
      const second = signedTransfer(key2);
      let sent: Promise<void> | undefined;
      let q: SubmitQueue | undefined;
      // The second starts once the first is pre-executed; its sender is not cached: a storage round later.
      const made = await queue(0, window, () => {
        sent ??= q!.send(second.tx, sender2, second.raw);
      });
      q = made.q;
      const first = signedTransfer();
      await q.send(first.tx, sender, first.raw);
      await sent;
      expect(made.counters).toMatchObject({ accepted: 2, submissions });
    });
  }
});
