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
const recipient = new Uint8Array(20).fill(0x42);
const state = new StateTree();
state.putAccount(sender, makeAccount({ balance: 10n ** 20n }));
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

async function queue(maxStaleRetries: number): Promise<{ q: SubmitQueue; counters: SubmitCounters }> {
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
    { ...defaultSubmitQueueOptions, rules, maxStaleRetries },
    {
      remote,
      chain: { requireHead: () => head } as unknown as ChainView,
      follower,
      miners: new MinerPool([minerAddress]),
      common,
      evms: new EvmPool(common),
      counters,
    },
  );
  return { q, counters };
}

function signedTransfer() {
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
    .sign(key)
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
