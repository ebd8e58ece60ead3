/**
 * A Submit may carry the public keys its client recovered (`senderKeys`); the miner checks them
 * in one batch instead of recovering each signature. Whatever they say, the miner must answer
 * and build exactly what it does without them: the same results, the same block, the same state
 * root, every transaction from the key that signed it. A wrong key (another sender's, a bit
 * flipped, zeros) costs only the per-signature price, on this thread and on a worker thread.
 */
import { RLP } from '@ethereumjs/rlp';
import { privateToAddress, privateToPublic } from '@ethereumjs/util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeAccount, StateTree, toHex } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon, SenderRecoveryPool } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner, type SenderRecovery } from '@monsoon/miner';
import type { AccountUpdate, SubmitRequest, SubmitResponse } from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';
import { signedTransfer } from '../helpers/transfer.js';

const rules = { ...defaultChainRules, chainId: 4243n };
const common = makeCommon(rules.chainId);
const N = 24;
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const keys = Array.from({ length: N }, (_, i) => keccak.keccak256(Uint8Array.of(9, i)));
const addrs = keys.map((k) => privateToAddress(k));
const publicKeys = keys.map((k) => privateToPublic(k));
const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);
const coinbase = new Uint8Array(20).fill(0xc1);

const full = new StateTree();
for (const a of genesis.alloc) full.putAccount(a.address, makeAccount({ balance: a.balance }));

const transfer = (from: number, nonce: bigint, to: Uint8Array, value: bigint): Uint8Array =>
  signedTransfer(common, keys[from]!, nonce, to, value);

/**
 * `raw` (an EIP-1559 envelope) with its signature's s made n − s and its y-parity flipped: the
 * same signer recovers, but the rules refuse a high s before recovery.
 */
function highS(raw: Uint8Array): Uint8Array {
  const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
  const s = BigInt(`0x${Buffer.from(fields[11]!).toString('hex')}`);
  fields[9] = fields[9]!.length === 0 ? Uint8Array.of(1) : new Uint8Array(0);
  fields[11] = Uint8Array.from(Buffer.from((ORDER - s).toString(16).padStart(64, '0'), 'hex'));
  const body = RLP.encode(fields);
  const out = new Uint8Array(body.length + 1);
  out[0] = 2;
  out.set(body, 1);
  return out;
}

/**
 * One submission: senders 0..11 each pay 12+i; among them sender 12's (at 4, its signature
 * garbled with `garble`: then no batch can pass), bytes that do not decode (at 7) and one with a
 * high s (sender 13's, at 9): the refused ones shift the miner's indices, which the claimed keys
 * must follow.
 */
function submission(garble: boolean): { req: SubmitRequest; signers: number[] } {
  const txs: Uint8Array[] = [];
  const signers: number[] = [];
  for (let i = 0; i < 12; i++) {
    txs.push(transfer(i, 0n, addrs[12 + i]!, 1_000n + BigInt(i)));
    signers.push(i);
  }
  const garbled = transfer(12, 0n, addrs[1]!, 5n);
  if (garble) garbled[garbled.length - 5]! ^= 0xff;
  txs.splice(4, 0, garbled);
  signers.splice(4, 0, 12);
  txs.splice(7, 0, Uint8Array.of(1, 2, 3));
  signers.splice(7, 0, 0);
  txs.splice(9, 0, highS(transfer(13, 0n, addrs[2]!, 6n)));
  signers.splice(9, 0, 13);
  const touched = [...addrs, coinbase];
  return {
    req: { transactions: txs, bag: full.proveAccounts(touched), prefetchedRoot: full.root() },
    signers,
  };
}

/** Keys claimed for each transaction of the submission: the true signer's unless `claim` says otherwise. */
function claimed(signers: readonly number[], claim: (i: number, signer: number) => Uint8Array): Uint8Array {
  const out = new Uint8Array(64 * signers.length);
  for (const [i, s] of signers.entries()) out.set(claim(i, s), 64 * i);
  return out;
}

interface Run {
  readonly res: SubmitResponse;
  readonly root: string;
  readonly txs: string[];
  readonly updates: AccountUpdate[];
}

async function run(req: SubmitRequest, recovery?: SenderRecovery): Promise<Run> {
  const m = await Miner.create(genesis, {
    rules,
    coinbase,
    retention: 2,
    difficulty: 0n,
    ...(recovery ? { recovery } : {}),
  });
  const res = await m.submit(req);
  const sealed = await m.seal();
  return {
    res,
    root: toHex(sealed.block.header.stateRoot),
    txs: sealed.block.transactions.map((t) => toHex(t)),
    updates: sealed.shards.flatMap((s) => s.accounts),
  };
}

const flip = (k: Uint8Array, byte: number): Uint8Array => {
  const c = k.slice();
  c[byte]! ^= 0x04;
  return c;
};

/** The claims tried: right, and wrong in each way a client could get (or make) them wrong. */
const CLAIMS: Record<string, (i: number, signer: number) => Uint8Array> = {
  'the true keys': (_i, s) => publicKeys[s]!,
  "one transaction claiming another sender's key": (i, s) => publicKeys[i === 2 ? 5 : s]!,
  "every transaction claiming the next sender's key": (_i, s) => publicKeys[(s + 1) % N]!,
  'one key with a bit flipped': (i, s) => (i === 9 ? flip(publicKeys[s]!, 40) : publicKeys[s]!),
  'zeros for every key': () => new Uint8Array(64),
};

describe.each([
  ['this thread', 0],
  ['a worker thread', 1],
])('a Submit with sender keys, recovered on %s', (_name, threads) => {
  let pool: SenderRecoveryPool;
  beforeAll(async () => {
    pool = await SenderRecoveryPool.create({ threads, minItemsPerMessage: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('without keys: the reference (refused: what does not decode, the high s, the garbled signature)', async () => {
    for (const garble of [false, true]) {
      const without = await run(submission(garble).req, pool);
      const refused = garble ? [4, 7, 9] : [7, 9];
      expect(without.res.results.map((r) => r.status)).toEqual(
        Array.from({ length: 15 }, (_, i) => (refused.includes(i) ? 'INVALID' : 'ACCEPTED')),
      );
      expect(without.txs).toHaveLength(15 - refused.length);
    }
  });

  it('hands recovery the claims of exactly the transactions that decoded, in order', async () => {
    const { req, signers } = submission(false);
    const seen: (Uint8Array | undefined)[] = [];
    const recording: SenderRecovery = {
      recoverSenders: (txs, claims) => {
        seen.push(claims);
        return pool.recoverSenders(txs, claims);
      },
    };
    await run({ ...req, senderKeys: claimed(signers, (_i, s) => publicKeys[s]!) }, recording);
    // What does not decode (7) and the high s (9, refused as it decodes) are not recovered.
    const decoded = signers.filter((_s, i) => i !== 7 && i !== 9);
    expect(seen.map((k) => (k === undefined ? undefined : toHex(k)))).toEqual([
      toHex(claimed(decoded, (_i, s) => publicKeys[s]!)),
    ]);
  });

  for (const [name, claim] of Object.entries(CLAIMS)) {
    for (const garble of [false, true]) {
      it(`with ${name}${garble ? ', one signature garbled' : ''}: the same results, block and root as without`, async () => {
        const { req, signers } = submission(garble);
        const reference = await run(req, pool);
        const withKeys = await run({ ...req, senderKeys: claimed(signers, claim) }, pool);
        expect(withKeys.res).toEqual(reference.res);
        expect(withKeys.root).toBe(reference.root);
        expect(withKeys.txs).toEqual(reference.txs);
      });
    }
  }
});

describe('claimed keys never credit a transaction to the claimed sender', () => {
  it("a transaction claiming another funded sender's key is executed from its signer", async () => {
    // Signer 0 pays 1000 to addrs[20]; its claim is signer 1's key. Trusting the claim would
    // debit signer 1 (same nonce 0, enough balance): the root would differ from the reference.
    const tx = transfer(0, 0n, addrs[20]!, 1000n);
    const req: SubmitRequest = {
      transactions: [tx],
      bag: full.proveAccounts([...addrs, coinbase]),
      prefetchedRoot: full.root(),
    };
    const reference = await run(req);
    const lied = await run({ ...req, senderKeys: publicKeys[1]!.slice() });
    expect(lied.res).toEqual(reference.res);
    expect(lied.res.results[0]!.status).toBe('ACCEPTED');
    expect(lied.root).toBe(reference.root);
    // Signer 0 paid (its nonce moved), signer 1 is untouched.
    const nonceOf = (a: Uint8Array) => {
      const u = lied.updates.find((x) => toHex(x.address) === toHex(a));
      return u === undefined || !('nonce' in u) ? undefined : u.nonce;
    };
    expect(nonceOf(addrs[0]!)).toBe(1n);
    expect(nonceOf(addrs[1]!)).toBeUndefined();
  });
});
