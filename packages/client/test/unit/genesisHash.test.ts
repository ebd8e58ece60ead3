/**
 * Block 0's hash computed in a worker thread: equal to the one this thread computes from the
 * same genesis (accounts with code and storage), the event loop turning meanwhile, and a
 * genesis the worker cannot build refused with its error.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { genesisHashInWorker, genesisHashOf } from '@monsoon/client';
import { keccak } from '@monsoon/keccak';
import {
  type Genesis,
  type GenesisAccount,
  genesisHeader,
  genesisState,
  headerHash,
} from '@monsoon/protocol';

function genesisOf(alloc: GenesisAccount[]): Genesis {
  return {
    chainId: 1337n,
    difficulty: 1n,
    gasLimit: 30_000_000n,
    timestamp: 0n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    alloc,
  };
}

/** `n` accounts; every 100th has code and a few storage slots. */
function accounts(n: number): GenesisAccount[] {
  const out: GenesisAccount[] = [];
  for (let i = 0; i < n; i++) {
    const address = keccak.keccak256(Uint8Array.of(i & 0xff, (i >> 8) & 0xff, i >> 16)).subarray(12);
    const rich = i % 100 === 0;
    out.push({
      address,
      nonce: BigInt(i % 3),
      balance: 10n ** 18n + BigInt(i),
      code: rich ? Uint8Array.of(0x60, 0x00, 0x56, i & 0xff) : new Uint8Array(0),
      storage: rich
        ? [1, 2, 3].map((s) => [keccak.keccak256(Uint8Array.of(s, i & 0xff)), Uint8Array.of(s + 1)] as const)
        : [],
    });
  }
  return out;
}

function hashHere(g: Genesis): Uint8Array {
  return headerHash(genesisHeader(g, genesisState(g, { hash: keccak }).root()), keccak);
}

describe('genesisHashInWorker', () => {
  it('equals the hash computed on this thread, while the event loop keeps turning', async () => {
    const g = genesisOf(accounts(5_000));
    let turns = 0;
    let done = false;
    const spin = (): void => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const hash = await genesisHashInWorker(g).finally(() => {
      done = true;
    });
    expect(Buffer.from(hash).toString('hex')).toBe(Buffer.from(hashHere(g)).toString('hex'));
    // Computed on this thread, not one turn would have run before it was done.
    expect(turns).toBeGreaterThan(1);
  }, 60_000);

  it('differs when one balance differs', async () => {
    const alloc = accounts(50);
    const changed = alloc.map((a, i) => (i === 7 ? { ...a, balance: a.balance + 1n } : a));
    const [a, b] = await Promise.all([
      genesisHashInWorker(genesisOf(alloc)),
      genesisHashInWorker(genesisOf(changed)),
    ]);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect(Buffer.from(b).equals(Buffer.from(hashHere(genesisOf(changed))))).toBe(true);
  }, 60_000);

  it("refuses with the worker's error when the genesis cannot be built", async () => {
    const bad = genesisOf([{ ...accounts(1)[0]!, address: new Uint8Array(3) }]);
    expect(() => hashHere(bad)).toThrow();
    await expect(genesisHashInWorker(bad)).rejects.toThrow(/genesis hash not computed/);
  }, 60_000);

  it('is computed once however often it is asked', async () => {
    const ask = genesisHashOf(genesisOf(accounts(10)));
    const first = ask();
    expect(ask()).toBe(first);
    await first;
  }, 60_000);

  it('lets go of the genesis once the worker has its copy (a client held its 100K accounts for good)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { ask, held } = (() => {
      const g = genesisOf(accounts(10));
      return { ask: genesisHashOf(g), held: new WeakRef(g) };
    })();
    const hash = await ask();
    expect(Buffer.from(hash).equals(Buffer.from(hashHere(genesisOf(accounts(10)))))).toBe(true);
    // A WeakRef's target is kept until the job that read it ends: collect in a turn that did not.
    const turn = () => new Promise((resolve) => setTimeout(resolve, 10));
    let gone = false;
    for (let i = 0; i < 20 && !gone; i++) {
      await turn();
      gc();
      await turn();
      gone = held.deref() === undefined;
    }
    expect(gone).toBe(true);
    expect(await ask()).toBe(hash);
  }, 60_000);
});
