/**
 * The client's per-sender pool against a real small cluster (two storage nodes, a miner, a
 * client), over plain JSON-RPC as a wallet uses it: transactions sent out of nonce order wait
 * for their gaps and all commit, in nonce order; a same-nonce replacement with a higher fee wins
 * (the one it replaced never commits), one without geth's 10 % bump is refused with geth's
 * words, and so are a resend and a transaction for another chain.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import { killAll, Prng, until } from '@monsoon/test-utils';
import { Wallet } from 'ethers';
import { rpcCall, rpcUrlOf, spawnClient, startFundedCluster } from '../helpers/cluster.js';

const CHAIN_ID = 1337;
const GWEI = 1_000_000_000n;
const SENDERS = 10;
const PER_SENDER = 10;
const wallets = Array.from(
  { length: SENDERS + 4 },
  (_, i) => new Wallet(`0x${Buffer.from(keccak.keccak256(Uint8Array.of(77, i))).toString('hex')}`),
);
const RECIPIENT = '0x00000000000000000000000000000000000000aa';

let dir: string;
let rpc: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-nonce-queue-'));
  const cluster = await startFundedCluster(
    dir,
    wallets.map((w) => w.address),
    CHAIN_ID,
  );
  rpc = await rpcUrlOf(spawnClient(cluster));
}, 60_000);

afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

const call = <T>(method: string, params: unknown[]) => rpcCall<T>(rpc, method, params);

const send = (raw: string) => call<string>('eth_sendRawTransaction', [raw]);

async function nonceOf(address: string, tag: 'latest' | 'pending'): Promise<number> {
  return Number((await call<string>('eth_getTransactionCount', [address, tag])).result);
}

function transfer(
  w: Wallet,
  nonce: number,
  fees: { tip: bigint; cap: bigint } = { tip: GWEI, cap: 3n * GWEI },
  chainId = CHAIN_ID,
): Promise<string> {
  return w.signTransaction({
    type: 2,
    chainId,
    nonce,
    to: RECIPIENT,
    value: 1n,
    gasLimit: 21_000n,
    maxPriorityFeePerGas: fees.tip,
    maxFeePerGas: fees.cap,
  });
}

describe('transactions sent out of nonce order', () => {
  it(`${SENDERS * PER_SENDER} transfers from ${SENDERS} senders in shuffled order all commit, nonces gap-free`, async () => {
    const senders = wallets.slice(0, SENDERS);
    const signed = await Promise.all(
      senders.flatMap((w) =>
        Array.from({ length: PER_SENDER }, async (_, nonce) => ({ w, nonce, raw: await transfer(w, nonce) })),
      ),
    );
    new Prng(2024).shuffle(signed);
    // All at once, as a dapp firing them concurrently would: none may be refused.
    const answers = await Promise.all(signed.map((t) => send(t.raw)));
    expect(answers.filter((a) => a.error !== undefined)).toEqual([]);
    const hashes = answers.map((a) => a.result!);
    expect(hashes).toEqual(signed.map((t) => keccakHex(t.raw)));

    await until(
      async () =>
        (await Promise.all(senders.map((w) => nonceOf(w.address, 'latest')))).every((n) => n === PER_SENDER),
      { what: 'every sender at nonce 10', timeoutMs: 60_000 },
    );
    const receipts = await Promise.all(
      hashes.map(
        async (h) =>
          (await call<{ status: string; blockNumber: string }>('eth_getTransactionReceipt', [h])).result,
      ),
    );
    expect(receipts.every((r) => r?.status === '0x1')).toBe(true);
    // Each sender's transactions are mined in nonce order.
    for (const w of senders) {
      const blocks = signed
        .map((t, i) => ({ t, block: Number(receipts[i]!.blockNumber) }))
        .filter((x) => x.t.w === w)
        .sort((a, b) => a.t.nonce - b.t.nonce)
        .map((x) => x.block);
      expect(blocks).toEqual([...blocks].sort((a, b) => a - b));
    }
  });

  it("a gapped transaction waits: 'pending' stops at the gap, and the gap filling sends both", async () => {
    const w = wallets[SENDERS]!;
    const second = await send(await transfer(w, 1));
    expect(second.error).toBeUndefined();
    expect(await nonceOf(w.address, 'pending')).toBe(0);
    const first = await send(await transfer(w, 0));
    expect(first.error).toBeUndefined();
    expect(await nonceOf(w.address, 'pending')).toBe(2);
    await until(async () => (await nonceOf(w.address, 'latest')) === 2, {
      what: 'both transactions mined',
      timeoutMs: 30_000,
    });
  });
});

describe('replacement, as geth rules it', () => {
  it('a higher tip replaces a queued transaction; an underpriced one and a resend are refused in geth’s words', async () => {
    const w = wallets[SENDERS + 1]!;
    const low = await transfer(w, 1, { tip: GWEI, cap: 3n * GWEI });
    expect((await send(low)).result).toBe(keccakHex(low));
    // 5 % more on both: under geth's 10 % bump.
    const underpriced = await send(
      await transfer(w, 1, { tip: (GWEI * 105n) / 100n, cap: (3n * GWEI * 105n) / 100n }),
    );
    expect(underpriced.error).toEqual({ code: -32000, message: 'replacement transaction underpriced' });
    const high = await transfer(w, 1, { tip: 2n * GWEI, cap: 4n * GWEI });
    expect((await send(high)).result).toBe(keccakHex(high));
    expect((await send(high)).error).toEqual({ code: -32000, message: 'already known' });
    // The replaced one is gone from the pool already.
    expect((await call('eth_getTransactionByHash', [keccakHex(low)])).result).toBeNull();

    expect((await send(await transfer(w, 0))).error).toBeUndefined();
    await until(async () => (await nonceOf(w.address, 'latest')) === 2, {
      what: 'both transactions mined',
      timeoutMs: 30_000,
    });
    const mined = await call<{ status: string; effectiveGasPrice: string }>('eth_getTransactionReceipt', [
      keccakHex(high),
    ]);
    expect(mined.result?.status).toBe('0x1');
    expect(BigInt(mined.result!.effectiveGasPrice)).toBe(GWEI + 2n * GWEI); // base fee + the higher tip
    expect((await call('eth_getTransactionReceipt', [keccakHex(low)])).result).toBeNull();
    expect((await call('eth_getTransactionByHash', [keccakHex(low)])).result).toBeNull();
  });

  it('a transaction a miner already took cannot be replaced: its nonce is used', async () => {
    const w = wallets[SENDERS + 2]!;
    expect((await send(await transfer(w, 0))).error).toBeUndefined();
    const again = await send(await transfer(w, 0, { tip: 5n * GWEI, cap: 9n * GWEI }));
    expect(again.error?.code).toBe(-32000);
    expect(again.error?.message).toMatch(/^nonce too low: next nonce 1, tx nonce 0$/);
  });
});

describe('refusals read as geth’s', () => {
  it('wrong chain id: "invalid sender: invalid chain id for signer"', async () => {
    const w = wallets[SENDERS + 3]!;
    const wrong = await send(await transfer(w, 0, undefined, CHAIN_ID + 1));
    expect(wrong.error).toEqual({
      code: -32000,
      message: `invalid sender: invalid chain id for signer: have ${CHAIN_ID + 1} want ${CHAIN_ID}`,
    });
  });
});

function keccakHex(raw: string): string {
  return `0x${Buffer.from(keccak.keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`;
}
