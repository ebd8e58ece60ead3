/**
 * A contract call's slots guessed from the calls before it: once one ERC-20 `transfer` has been
 * pre-executed (stopping at each balance it lacked, a fetch round each), the next `transfer`
 * from another sender to another holder fetches both balances with its first reads and runs
 * once; its witness is the same as without the guess. A guess that is wrong costs a slot
 * proof, never the outcome.
 */

import { privateToAddress } from '@ethereumjs/util';
import type { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { defaultSlotPredictorOptions, type RemoteState, SlotPredictor, speculate } from '@monsoon/client';
import { byteKey, makeAccount, StateTree } from '@monsoon/dsm-tree';
import { EvmPool, type SignedTx } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  DEFAULT_TOKEN_ADDRESS,
  encodeTokenTransfer,
  tokenBalanceSlot,
  tokenRuntimeCode,
} from '@monsoon/workload';
import { common, remoteOver, rules, signedTx } from '../helpers/preExecution.js';
import { serveStorage } from '../helpers/storageStandIn.js';

const keys = Array.from({ length: 8 }, (_, i) => keccak.keccak256(Uint8Array.of(0x51, i)));
const holders = keys.map((k) => privateToAddress(k));
const coinbase = new Uint8Array(20).fill(0xcb);
const token = DEFAULT_TOKEN_ADDRESS;

const state = new StateTree();
for (const h of holders) state.putAccount(h, makeAccount({ balance: 10n ** 18n }));
state.putAccount(token, makeAccount({ codeHash: state.putCode(tokenRuntimeCode()) }));
for (const h of holders) state.putStorage(token, tokenBalanceSlot(h), Uint8Array.of(0x03, 0xe8));
// Filler accounts, so proofs have some depth.
for (let i = 0; i < 200; i++)
  state.putAccount(keccak.keccak256(Uint8Array.of(9, i)).subarray(12), makeAccount({ balance: 1n }));
const at = { blockHash: new Uint8Array(32).fill(0xbb), stateRoot: state.root() };
const env = { number: 2n, timestamp: 1_700_000_000n, coinbase, gasLimit: 30_000_000n };
const evms = new EvmPool(common, 4);

let server: Server;
let address: string;
beforeAll(async () => {
  ({ server, address } = await serveStorage(state, at.blockHash));
});
afterAll(() => server.forceShutdown());

function transfer(from: number, to: number, data = encodeTokenTransfer(holders[to]!, 7n)): SignedTx {
  return signedTx(keys[from]!, { nonce: 0n, to: token, value: 0n, data, gasLimit: 100_000n });
}

const remote = () => remoteOver(address);

const run = (r: RemoteState, tx: SignedTx, from: number, slots?: SlotPredictor) =>
  speculate(r, at, env, rules, common, tx, holders[from]!, evms, undefined, slots);

const nodesOf = (bag: { values(): Uint8Array[] }) => new Set(bag.values().map(byteKey));

describe('SlotPredictor', () => {
  it('fetches a transfer’s two balances with its first reads once a transfer like it ran', async () => {
    const slots = new SlotPredictor(defaultSlotPredictorOptions, keccak);
    const r = await remote();
    // Unknown: the first reads, then one round per balance it lacked.
    const first = await run(r, transfer(0, 1), 0, slots);
    expect(first.outcome.status).toBe('included');
    expect(first.rounds).toBe(3);
    // Learned: balances[sender] and balances[calldata word 0], mapping slot 0.
    const next = transfer(2, 3);
    expect(slots.predict(next, holders[2]!).map(byteKey).sort()).toEqual(
      [tokenBalanceSlot(holders[2]!), tokenBalanceSlot(holders[3]!)].map(byteKey).sort(),
    );
    const guessed = await run(r, next, 2, slots);
    expect(guessed.rounds).toBe(1);
    // The same outcome and witness as a pre-execution that guessed nothing.
    const plain = await run(await remote(), next, 2);
    expect(plain.rounds).toBe(3);
    expect(guessed.outcome).toEqual(plain.outcome);
    expect(nodesOf(guessed.served)).toEqual(nodesOf(plain.served));
    r.storage.close();
  });

  it('a wrong guess changes only what is fetched, is corrected by the run it missed, and is given up when it keeps missing', async () => {
    const slots = new SlotPredictor(defaultSlotPredictorOptions, keccak);
    const mapping5 = (who: Uint8Array) => {
      const input = new Uint8Array(64);
      input.set(who, 12);
      input[63] = 5;
      return keccak.keccak256(input);
    };
    // Taught that a transfer reads the sender's entry of a mapping at slot 5: wrong for this token.
    const taught = transfer(0, 1);
    slots.learn(taught, holders[0]!, [byteKey(mapping5(holders[0]!))], true, false);
    expect(slots.predict(transfer(2, 3), holders[2]!).map(byteKey)).toEqual([byteKey(mapping5(holders[2]!))]);
    const r = await remote();
    const wrong = await run(r, transfer(2, 3), 2, slots);
    const truth = await run(await remote(), transfer(2, 3), 2);
    expect(wrong.rounds).toBeGreaterThan(1);
    expect(wrong.outcome).toEqual(truth.outcome);
    // The witness holds what the run needs (and the needless slot's proof besides).
    for (const n of nodesOf(truth.served)) expect(nodesOf(wrong.served).has(n)).toBe(true);
    // Learned from the run that missed: the next one guesses right.
    expect((await run(r, transfer(4, 5), 4, slots)).rounds).toBe(1);
    r.storage.close();
    // A guess that keeps missing (its slots derive some other way) is given up after a few misses.
    const other = transfer(6, 7);
    // Calls that guessed nothing (under way before anything was learned) count no miss.
    for (let i = 0; i < 5; i++)
      slots.learn(other, holders[6]!, [byteKey(mapping5(holders[6]!))], true, false);
    expect(slots.predict(other, holders[6]!)).toHaveLength(1);
    for (let i = 0; i < 5; i++) slots.learn(other, holders[6]!, [byteKey(mapping5(holders[6]!))], true, true);
    expect(slots.predict(other, holders[6]!)).toEqual([]);
  });
});
