/**
 * A plain transfer is pre-executed without an executor (no BlockExecutor, no state manager, no
 * flush): what it comes to — included or refused with the same error — and the witness it
 * leaves are held to what BlockExecutor gives for the same transaction on the same state, and
 * what is not certainly a plain transfer is left to BlockExecutor.
 */
import { privateToAddress } from '@ethereumjs/util';
import type { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { engineOf, firstReads, plainTransfer, type RemoteState, speculate } from '@monsoon/client';
import { byteKey, fromHex, makeAccount, StateTree } from '@monsoon/dsm-tree';
import { BlockExecutor, EvmPool, type SignedTx } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { common, remoteOver, rules, signedTx } from '../helpers/preExecution.js';
import { serveStorage } from '../helpers/storageStandIn.js';

const keys = Array.from({ length: 4 }, (_, i) => keccak.keccak256(Uint8Array.of(0x71, i)));
const senders = keys.map((k) => privateToAddress(k));
const coinbase = new Uint8Array(20).fill(0xcb);
const holder = new Uint8Array(20).fill(0x11);
const empty = new Uint8Array(20).fill(0x22);
const contract = new Uint8Array(20).fill(0x33);
const fresh = new Uint8Array(20).fill(0x44);
const precompile = fromHex('0x0000000000000000000000000000000000000001');

const state = new StateTree();
senders.forEach((s, i) => {
  state.putAccount(s, makeAccount({ nonce: BigInt(i), balance: 10n ** 18n }));
});
state.putAccount(coinbase, makeAccount({ balance: 5n }));
state.putAccount(holder, makeAccount({ balance: 7n }));
state.putAccount(empty, makeAccount({}));
state.putAccount(contract, makeAccount({ codeHash: state.putCode(fromHex('0x60006000f3')) }));
for (let i = 0; i < 300; i++)
  state.putAccount(keccak.keccak256(Uint8Array.of(8, i, i >> 8)).subarray(12), makeAccount({ balance: 1n }));
const at = { blockHash: new Uint8Array(32).fill(0xbc), stateRoot: state.root() };
const env = { number: 2n, timestamp: 1_700_000_000n, coinbase, gasLimit: 30_000_000n };
const evms = new EvmPool(common, 2);

let server: Server;
let address: string;
beforeAll(async () => {
  ({ server, address } = await serveStorage(state, at.blockHash));
});
afterAll(() => server.forceShutdown());

function tx(
  from: number,
  to: Uint8Array,
  f: { nonce?: bigint; value?: bigint; tip?: bigint } = {},
): SignedTx {
  return signedTx(keys[from]!, {
    nonce: f.nonce ?? BigInt(from),
    to,
    value: f.value ?? 3n,
    gasLimit: 21_000n,
    ...(f.tip === undefined ? {} : { tip: f.tip }),
  });
}

const remote = () => remoteOver(address);

/** What speculate did before plain transfers skipped the executor: BlockExecutor on the same tree. */
async function throughExecutor(r: RemoteState, t: SignedTx, from: number) {
  const sender = senders[from]!;
  // As speculate's run on a tree asks: the callee's code too.
  const { value, served } = await r.withState(at, firstReads(t, sender, coinbase, [], true), async (tree) => {
    const a = tree.getAccount(sender);
    if (a !== undefined && a.nonce < t.nonce) tree.putAccount(sender, makeAccount({ ...a, nonce: t.nonce }));
    const executor = await BlockExecutor.create(tree, env, rules, { common, evms, engine: engineOf(t) });
    try {
      return await executor.execute(t, sender);
    } finally {
      executor.release();
    }
  });
  return { outcome: value, served };
}

const outcomeOf = (o: { status: string; error?: Error; receipt?: unknown }) =>
  o.status === 'invalid' ? { status: o.status, message: o.error!.message } : o;
const nodesOf = (bag: { values(): Uint8Array[] }) => new Set(bag.values().map(byteKey));

describe('plain transfers without an executor', () => {
  const cases: [string, () => SignedTx, number][] = [
    ['to an account', () => tx(0, holder), 0],
    ['to a new account', () => tx(1, fresh), 1],
    ['with no tip', () => tx(1, holder, { tip: 0n }), 1],
    ['ahead of the state nonce (the sender has earlier ones pending)', () => tx(2, holder, { nonce: 9n }), 2],
    ['with a nonce already used', () => tx(3, holder, { nonce: 1n }), 3],
    ['of more than the sender has', () => tx(0, holder, { value: 10n ** 19n }), 0],
  ];
  for (const [name, make, from] of cases) {
    it(`${name}: the same outcome and witness as BlockExecutor`, async () => {
      const t = make();
      const r = await remote();
      const fast = await speculate(r, at, env, rules, common, t, senders[from]!, evms);
      const ref = await throughExecutor(await remote(), t, from);
      expect(outcomeOf(fast.outcome)).toEqual(outcomeOf(ref.outcome));
      if (fast.outcome.status === 'included') expect(nodesOf(fast.served)).toEqual(nodesOf(ref.served));
      // It did go the fast way.
      const tree = r.tree(at.stateRoot);
      expect(plainTransfer(tree, t, tree.getAccount(senders[from]!), env, rules)).toBeDefined();
      r.storage.close();
    });
  }

  it("takes its admission's reads (the same outcome and witness, node for node in order) only at their root", async () => {
    for (const [, make, from] of cases) {
      const t = make();
      const sender = senders[from]!;
      const r = await remote();
      // What an admission leaves (ReadBackend.accountRead): the first reads' walked paths.
      const reads = (await r.readAccounts(at, firstReads(t, sender, coinbase)))!;
      const taken = await speculate(r, at, env, rules, common, t, sender, evms, {
        stateRoot: at.stateRoot,
        reads,
      });
      const walked = await speculate(await remote(), at, env, rules, common, t, sender, evms);
      expect(outcomeOf(taken.outcome)).toEqual(outcomeOf(walked.outcome));
      expect(taken.served.values()).toEqual(walked.served.values());
      expect(taken.rounds).toBe(0);
      // The reads were taken, not walked again.
      const witnessReads = (taken.served as unknown as { reads: unknown[] }).reads;
      expect(witnessReads.every((x) => reads.includes(x as (typeof reads)[number]))).toBe(true);
      // Reads at another root are not taken.
      const elsewhere = { stateRoot: new Uint8Array(32).fill(1), reads };
      const other = await speculate(r, at, env, rules, common, t, sender, evms, elsewhere);
      const otherReads = (other.served as unknown as { reads: unknown[] }).reads;
      expect(otherReads.some((x) => reads.includes(x as (typeof reads)[number]))).toBe(false);
      r.storage.close();
    }
  });

  it("asks a storage node for a callee's code only where the transaction can be more than a plain transfer", () => {
    const codeAsked = (t: SignedTx) => firstReads(t, senders[0]!, coinbase).map((q) => q.code);
    expect(codeAsked(tx(0, holder))).toEqual([false, false, false]);
    expect(codeAsked(tx(0, contract))).toEqual([false, false, false]);
    const call = signedTx(keys[0]!, {
      nonce: 0n,
      to: contract,
      value: 0n,
      gasLimit: 50_000n,
      data: Uint8Array.of(1),
    });
    expect(codeAsked(call)).toEqual([false, false, true]);
    expect(codeAsked(tx(0, precompile))).toEqual([false, false, true]);
  });

  it('leaves to BlockExecutor a call to code, a precompile, and a transfer that empties an account', async () => {
    const r = await remote();
    for (const [t, from] of [
      [tx(0, contract), 0],
      [tx(0, precompile), 0],
    ] as const) {
      const { outcome } = await speculate(r, at, env, rules, common, t, senders[from]!, evms);
      const ref = await throughExecutor(await remote(), t, from);
      expect(outcomeOf(outcome)).toEqual(outcomeOf(ref.outcome));
    }
    // Deleting the emptied account (EIP-161) may need a sibling node more than the reads did.
    const emptying = tx(0, empty, { value: 0n });
    await r.withState(at, firstReads(emptying, senders[0]!, coinbase), () => undefined);
    for (const t of [tx(0, contract), tx(0, precompile), emptying]) {
      const tree = r.tree(at.stateRoot);
      expect(plainTransfer(tree, t, tree.getAccount(senders[0]!), env, rules)).toBeUndefined();
    }
    r.storage.close();
  });
});
