/** Genesis documents for tests: funded accounts, written as the geth-style genesis.json the role CLIs read. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Genesis } from '@monsoon/protocol';
import { bytesToHex as hex } from '@monsoon/util';

const quantity = (n: bigint) => `0x${n.toString(16)}`;

/** A genesis in which each of `addresses` holds 1000 ether and nothing else; blocks need no work (minDifficulty 0). */
export function fundedGenesis(addresses: readonly Uint8Array[], chainId: bigint, gasLimit: bigint): Genesis {
  return {
    chainId,
    difficulty: 0n,
    gasLimit,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    minDifficulty: 0n,
    alloc: addresses.map((address) => ({
      address,
      nonce: 0n,
      balance: 10n ** 21n,
      code: new Uint8Array(0),
      storage: [],
    })),
  };
}

/** `g` as a geth-style genesis.json document. */
export function genesisJson(g: Genesis): Record<string, unknown> {
  const alloc: Record<string, unknown> = {};
  for (const a of g.alloc) {
    alloc[hex(a.address)] = {
      balance: quantity(a.balance),
      nonce: quantity(a.nonce),
      ...(a.code.length > 0 ? { code: hex(a.code) } : {}),
      ...(a.storage.length > 0
        ? { storage: Object.fromEntries(a.storage.map(([k, v]) => [hex(k), hex(v)])) }
        : {}),
    };
  }
  return {
    config: {
      chainId: Number(g.chainId),
      ...(g.minDifficulty !== undefined ? { monsoon: { minDifficulty: Number(g.minDifficulty) } } : {}),
    },
    difficulty: quantity(g.difficulty),
    gasLimit: quantity(g.gasLimit),
    timestamp: quantity(g.timestamp),
    extraData: hex(g.extraData),
    coinbase: hex(g.coinbase),
    nonce: hex(g.nonce),
    alloc,
  };
}

/** Writes `g` as `<dir>/genesis.json`; returns the path. */
export async function writeGenesis(dir: string, g: Genesis): Promise<string> {
  const file = join(dir, 'genesis.json');
  await writeFile(file, JSON.stringify(genesisJson(g), null, 1));
  return file;
}
