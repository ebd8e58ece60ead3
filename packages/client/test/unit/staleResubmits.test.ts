/**
 * Stale answers are answered by pre-executing again once the state head moved, a bounded number
 * of times: a transaction a miner keeps calling stale is resubmitted exactly `maxStaleRetries`
 * times, each only after waiting for the state to move, then given up (STALE_RETRIES); one that
 * is stale once goes through on the next submission. Back-pressure (issue 15): a Submit call
 * that gets no answer is sent again, and no more than `maxInFlight` calls are outstanding. In
 * process: a storage stand-in serving a real state tree, a miner stand-in answering from a
 * script (or holding a call unanswered), the chain held at one block.
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
  type SubmitQueueOptions,
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
import { rejection, until } from '@monsoon/test-utils';
import { serveStorage } from '../helpers/storageStandIn.js';

const rules = { ...defaultChainRules, chainId: 1337n };
const common = makeCommon(rules.chainId);
const key = keccak.keccak256(Uint8Array.of(4, 2));
const sender = privateToAddress(key);
const key2 = keccak.keccak256(Uint8Array.of(4, 3));
const sender2 = privateToAddress(key2);
const key3 = keccak.keccak256(Uint8Array.of(4, 4));
const sender3 = privateToAddress(key3);
const recipient = new Uint8Array(20).fill(0x42);
const state = new StateTree();
state.putAccount(sender, makeAccount({ balance: 10n ** 20n }));
state.putAccount(sender2, makeAccount({ balance: 10n ** 20n }));
state.putAccount(sender3, makeAccount({ balance: 10n ** 20n }));
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
/**
 * The miner's answer to the n-th submission of a test (0-based); `hold`: none until `release`
 * (never, for a call past its deadline).
 */
let script: (n: number) => TxStatus | 'hold' = () => TxStatus.Stale;
/** Answers the held calls (Accepted unless told otherwise), in order. */
let held: ((status?: TxStatus) => void)[] = [];
/** Transactions per call the miner received, and the most calls it held unanswered at once. */
let callSizes: number[] = [];
let outstanding = 0;
let maxOutstanding = 0;

const servers: Server[] = [];
let storageAddress: string;
let minerAddress: string;

async function serveMiner(): Promise<string> {
  const server = new Server();
  server.addService(MinerServiceDefinition, {
    submit(call: ServerUnaryCall<minerPb.SubmitRequest, unknown>, cb: sendUnaryData<minerPb.SubmitResponse>) {
      const req = submitRequestFromProto(call.request);
      const scripted = script(events.filter((e) => e === 'submit').length);
      events.push('submit');
      callSizes.push(req.transactions.length);
      const answer = (status: TxStatus) => {
        outstanding--;
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
      };
      maxOutstanding = Math.max(maxOutstanding, ++outstanding);
      if (scripted === 'hold') held.push((status = TxStatus.Accepted) => answer(status));
      else answer(scripted);
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
  submitOpts: Partial<SubmitQueueOptions> = {},
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
    resubmissions: 0,
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
    { ...defaultSubmitQueueOptions, rules, maxStaleRetries, batchWindowMs, ...submitOpts },
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

function resetMiner(): void {
  events = [];
  held = [];
  callSizes = [];
  outstanding = 0;
  maxOutstanding = 0;
}

describe('back-pressure towards the miner', () => {
  it('sends a call that got no answer again, and its transaction takes the new answer', async () => {
    resetMiner();
    // The first call is never answered (its deadline passes); the second is.
    script = (n) => (n === 0 ? 'hold' : TxStatus.Accepted);
    const { q, counters } = await queue(0, undefined, undefined, { deadlineMs: 300, submitAttempts: 3 });
    const { tx, raw } = signedTransfer();
    await q.send(tx, sender, raw);
    expect(events).toEqual(['submit', 'submit']);
    expect(counters).toMatchObject({ accepted: 1, submissions: 1, resubmissions: 1 });
  });

  it('fails the transactions MINER_UNAVAILABLE once submitAttempts calls went unanswered', async () => {
    resetMiner();
    script = () => 'hold';
    const { q, counters } = await queue(0, undefined, undefined, { deadlineMs: 200, submitAttempts: 2 });
    const { tx, raw } = signedTransfer();
    const e = await rejection(q.send(tx, sender, raw));
    expect(isClientError(e, ClientErrorCode.MinerUnavailable)).toBe(true);
    expect(events).toEqual(['submit', 'submit']);
    expect(counters).toMatchObject({ accepted: 0, resubmissions: 1 });
    for (const h of held) h();
  });

  it('keeps at most maxInFlight calls outstanding; what waits goes out together', async () => {
    resetMiner();
    script = () => 'hold';
    const { q, counters } = await queue(0, 0, undefined, { maxInFlight: 1 });
    const first = signedTransfer(key);
    const sentFirst = q.send(first.tx, sender, first.raw);
    await until(() => held.length === 1, { what: 'the first call at the miner', timeoutMs: 10_000 });
    const [second, third] = [signedTransfer(key2), signedTransfer(key3)];
    const sentRest = [q.send(second.tx, sender2, second.raw), q.send(third.tx, sender3, third.raw)];
    await until(() => q.waiting === 2, { what: 'two pre-executed transactions waiting', timeoutMs: 10_000 });
    expect(held).toHaveLength(1);
    held.shift()!();
    await sentFirst;
    await until(() => held.length === 1, { what: 'the second call at the miner', timeoutMs: 10_000 });
    held.shift()!();
    await Promise.all(sentRest);
    expect(callSizes).toEqual([1, 2]);
    expect(maxOutstanding).toBe(1);
    expect(counters).toMatchObject({ accepted: 3, submissions: 2, resubmissions: 0 });
  });

  it('pre-executes no more than maxWaiting ahead of the Submit calls; the rest wait their turn', async () => {
    resetMiner();
    script = () => 'hold';
    let preExecuted = 0;
    const { q, counters } = await queue(0, 0, () => preExecuted++, { maxInFlight: 1, maxWaiting: 1 });
    const [a, b, c] = [signedTransfer(key), signedTransfer(key2), signedTransfer(key3)];
    const sent = [q.send(a.tx, sender, a.raw), q.send(b.tx, sender2, b.raw), q.send(c.tx, sender3, c.raw)];
    await until(() => held.length === 1 && q.waiting === 1, {
      what: 'one call at the miner, one transaction pre-executed behind it',
      timeoutMs: 10_000,
    });
    // The third has not been pre-executed: it would run at the state of the moment the second's call goes.
    expect(preExecuted).toBe(2);
    expect(q.queued).toBe(1);
    for (let n = 1; n <= 3; n++) {
      await until(() => held.length === 1, { what: `call ${n} at the miner`, timeoutMs: 10_000 });
      held.shift()!();
    }
    await Promise.all(sent);
    expect(callSizes).toEqual([1, 1, 1]);
    expect(preExecuted).toBe(3);
    expect(q.queued).toBe(0);
    expect(counters).toMatchObject({ accepted: 3, submissions: 3 });
  });

  it("lets a stale answer's retry pre-execute at once, not behind the line", async () => {
    resetMiner();
    script = () => 'hold';
    const { q, counters } = await queue(1, 0, undefined, { maxInFlight: 1, maxWaiting: 1 });
    const [a, b, c] = [signedTransfer(key), signedTransfer(key2), signedTransfer(key3)];
    const sent = [q.send(a.tx, sender, a.raw), q.send(b.tx, sender2, b.raw), q.send(c.tx, sender3, c.raw)];
    await until(() => held.length === 1 && q.waiting === 1 && q.queued === 1, {
      what: "a's call held, b pre-executed behind it, c in line",
      timeoutMs: 10_000,
    });
    held.shift()!(TxStatus.Stale);
    // b's call went and c took its place; a's retry did not wait for one.
    await until(() => held.length === 1 && q.waiting === 2, {
      what: "b's call held, c and a's retry pre-executed behind it",
      timeoutMs: 10_000,
    });
    held.shift()!();
    await until(() => held.length === 1, { what: 'the third call', timeoutMs: 10_000 });
    held.shift()!();
    await Promise.all(sent);
    expect(callSizes).toEqual([1, 1, 2]);
    expect(counters).toMatchObject({ accepted: 3, staleReplies: 1, submissions: 3 });
  });

  it('refuses what waits for its turn when closed', async () => {
    resetMiner();
    script = () => 'hold';
    const { q } = await queue(0, 0, undefined, { maxInFlight: 1, maxWaiting: 1 });
    const [a, b, c] = [signedTransfer(key), signedTransfer(key2), signedTransfer(key3)];
    const sent = [q.send(a.tx, sender, a.raw), q.send(b.tx, sender2, b.raw), q.send(c.tx, sender3, c.raw)];
    await until(() => q.queued === 1 && q.waiting === 1, {
      what: 'one waiting, one in line',
      timeoutMs: 10_000,
    });
    q.close();
    for (const p of sent.slice(1))
      expect(isClientError(await rejection(p), ClientErrorCode.Closed)).toBe(true);
    held.shift()!();
    await sent[0];
  });
});
