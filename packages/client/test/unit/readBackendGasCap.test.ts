/**
 * A read-only call's work is bounded (issue 15: bounded work per request): eth_call,
 * eth_estimateGas and eth_createAccessList run with at most `gasCap` gas (geth's --rpc.gascap),
 * a request asking for more capped as geth caps it (the three share one path, called here). The call here is a creation whose initcode
 * returns the gas it has left (GAS PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN), so the answer says
 * what gas the run was given. In process: a real state tree behind a RemoteState stand-in.
 */
import { describe, expect, it } from '@jest/globals';
import {
  ChainView,
  type ClientBlock,
  defaultReadBackendOptions,
  ReadBackend,
  type RemoteState,
} from '@monsoon/client';
import { fromHex, StateTree } from '@monsoon/dsm-tree';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import type { BlockHeader } from '@monsoon/protocol';
import { bytesToBigint } from '@monsoon/util';

const rules = defaultChainRules;
const GAS_LEFT = fromHex('0x5a60005260206000f3');

function backend(gasCap: bigint): ReadBackend {
  const chain = new ChainView();
  const head: ClientBlock = {
    hash: new Uint8Array(32).fill(1),
    header: {
      parentHash: new Uint8Array(32),
      number: 1n,
      difficulty: 0n,
      timestamp: 1_700_000_000n,
      miner: new Uint8Array(20),
      gasLimit: 30_000_000n,
      stateRoot: new StateTree().root(),
    } as BlockHeader,
    transactions: [],
    txHashes: [],
    txKeys: [],
    receipts: [],
    logsBloom: new Uint8Array(256),
    size: 0,
  };
  chain.add(head);
  const tree = new StateTree();
  const remote = {
    withState: async <T>(_at: unknown, _first: unknown, f: (t: StateTree) => Promise<T> | T) => ({
      value: await f(tree),
    }),
  } as unknown as RemoteState;
  return new ReadBackend(
    { ...defaultReadBackendOptions, rules, gasCap },
    { chain, remote, common: makeCommon(rules.chainId) },
  );
}

/** The gas a creation of GAS_LEFT's initcode had left when it ran GAS. */
async function gasLeft(b: ReadBackend, gas: bigint | undefined): Promise<bigint> {
  const out = await b.call({ data: GAS_LEFT, ...(gas === undefined ? {} : { gas }) }, { kind: 'latest' });
  return bytesToBigint(out);
}

describe('ReadBackend gas cap', () => {
  it('runs a call asking for more than the cap with the cap', async () => {
    const capped = await gasLeft(backend(defaultReadBackendOptions.gasCap), 2n ** 62n);
    expect(capped).toBeLessThan(50_000_000n);
    expect(capped).toBeGreaterThan(49_000_000n);
  });

  it('leaves a call within the cap alone, and the block gas limit is the default', async () => {
    const b = backend(defaultReadBackendOptions.gasCap);
    const asked = await gasLeft(b, 1_000_000n);
    expect(asked).toBeLessThan(1_000_000n);
    expect(asked).toBeGreaterThan(900_000n);
    const byDefault = await gasLeft(b, undefined);
    expect(byDefault).toBeLessThan(30_000_000n);
    expect(byDefault).toBeGreaterThan(29_000_000n);
  });

  it('takes 0 for no cap', async () => {
    expect(await gasLeft(backend(0n), 2n ** 40n)).toBeGreaterThan(2n ** 39n);
  });
});
