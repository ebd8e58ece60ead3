/**
 * geth-style genesis.json: chain parameters and an `alloc` of accounts with balance, nonce, code
 * and storage, read as leniently and as strictly as geth reads it (core/genesis.go's gencodec
 * types): the header's numbers (nonce, timestamp, gasLimit, difficulty, baseFeePerGas, …) and an
 * account's nonce and balance in hex or decimal, strings or JSON numbers; code, extraData and
 * hashes as 0x-hex; the chain config's numbers as JSON numbers (see chainConfig.ts for the fork
 * it picks). `difficulty`, `alloc` and each account's `balance` are required, as geth requires
 * them. Monsoon's own rule sits in `config.monsoon` (`minDifficulty`, see Genesis). Anything else is refused with a BadGenesis ProtocolError naming the field.
 */

import { EMPTY_ROOT } from '@monsoon/dsm-tree';
import type { BlockHeader } from './blockHeader.js';
import { type Fork, parseChainConfig } from './chainConfig.js';
import { badGenesis, hexBytes, hexOrDecimal, jsonObject, storageWord } from './gethJson.js';

export interface GenesisAccount {
  /** 20 bytes. */
  readonly address: Uint8Array;
  readonly nonce: bigint;
  readonly balance: bigint;
  /** Empty for none. */
  readonly code: Uint8Array;
  /** [slot (32 bytes), value (no leading zeros, non-empty)] pairs. */
  readonly storage: readonly (readonly [Uint8Array, Uint8Array])[];
}

export interface Genesis {
  readonly chainId: bigint;
  /** The fork the config makes active at the genesis; undefined when it names none (the chain's default). */
  readonly fork?: Fork | undefined;
  /** The genesis block's base fee, when the file gives one. */
  readonly baseFeePerGas?: bigint | undefined;
  readonly difficulty: bigint;
  readonly gasLimit: bigint;
  readonly timestamp: bigint;
  readonly extraData: Uint8Array;
  readonly coinbase: Uint8Array;
  /** The header's 8-byte nonce (geth's `nonce` is a uint64 quantity). */
  readonly nonce: Uint8Array;
  readonly alloc: readonly GenesisAccount[];
  /**
   * The chain's difficulty rule: every block after the genesis must have at least this
   * difficulty (its proof of work meeting it), `config.monsoon.minDifficulty` in the file.
   * Absent from the file: {@link DEFAULT_MIN_DIFFICULTY} (no block without proof of work); a
   * chain without work (benchmarks, tests) must say 0 explicitly.
   */
  readonly minDifficulty?: bigint | undefined;
}

/** The least difficulty of a block when the genesis sets none: difficulty 0 (no work) is refused. */
export const DEFAULT_MIN_DIFFICULTY = 1n;

/** The least difficulty the chain of `g` allows a block after the genesis. */
export function minDifficultyOf(g: Genesis): bigint {
  return g.minDifficulty ?? DEFAULT_MIN_DIFFICULTY;
}

const NONE = new Uint8Array(0);

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

/** A uint64 as 8 big-endian bytes (the header's nonce). */
function uint64Bytes(n: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n);
  return out;
}

function parseAlloc(raw: unknown): GenesisAccount[] {
  const alloc = jsonObject(raw, 'alloc');
  if (alloc === undefined) return badGenesis('alloc', 'missing (geth requires it)');
  const accounts: GenesisAccount[] = [];
  const seen = new Set<string>();
  for (const [addr, entry] of Object.entries(alloc)) {
    const f = `alloc[${addr}]`;
    const address = hexBytes(addr, `${f} address`, { length: 20, unprefixed: true }, NONE);
    const key = Buffer.from(address).toString('hex');
    if (seen.has(key)) badGenesis(f, 'address listed twice');
    seen.add(key);
    const a = jsonObject(entry, f);
    if (a === undefined) return badGenesis(f, 'expected an object, found null');
    const storage: [Uint8Array, Uint8Array][] = [];
    for (const [slot, value] of Object.entries(jsonObject(a.storage, `${f}.storage`) ?? {})) {
      const s = storageWord(slot, `${f}.storage slot`);
      const v = stripZeros(storageWord(value, `${f}.storage[${slot}]`));
      if (v.length > 0) storage.push([s, v]);
    }
    accounts.push({
      address,
      nonce: hexOrDecimal(a.nonce, `${f}.nonce`, 64, 0n),
      balance: hexOrDecimal(a.balance, `${f}.balance`, 256),
      code: hexBytes(a.code, `${f}.code`, {}, NONE),
      storage,
    });
  }
  return accounts;
}

/** Parses a genesis.json document (already JSON-parsed). */
export function parseGenesis(doc: unknown): Genesis {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) badGenesis('', 'expected a JSON object');
  const g = doc as Record<string, unknown>;
  const alloc = parseAlloc(g.alloc);
  const difficulty = hexOrDecimal(g.difficulty, 'difficulty', 256);
  const timestamp = hexOrDecimal(g.timestamp, 'timestamp', 64, 0n);
  const number = hexOrDecimal(g.number, 'number', 64, 0n);
  if (number !== 0n) badGenesis('number', `a Monsoon genesis is block 0, found ${number}`, { found: number });
  hexOrDecimal(g.gasUsed, 'gasUsed', 64, 0n);
  hexOrDecimal(g.excessBlobGas, 'excessBlobGas', 64, 0n);
  hexOrDecimal(g.blobGasUsed, 'blobGasUsed', 64, 0n);
  hexBytes(g.mixHash, 'mixHash', { length: 32 }, NONE);
  hexBytes(g.parentHash, 'parentHash', { length: 32 }, NONE);
  const { chainId, fork } = parseChainConfig(g.config, { timestamp, difficulty });
  const monsoon = jsonObject(jsonObject(g.config, 'config')?.monsoon, 'config.monsoon');
  const minDifficulty = hexOrDecimal(
    monsoon?.minDifficulty,
    'config.monsoon.minDifficulty',
    256,
    DEFAULT_MIN_DIFFICULTY,
  );
  const baseFee = g.baseFeePerGas;
  return {
    chainId,
    fork,
    baseFeePerGas:
      baseFee === undefined || baseFee === null ? undefined : hexOrDecimal(baseFee, 'baseFeePerGas', 256),
    difficulty,
    gasLimit: hexOrDecimal(g.gasLimit, 'gasLimit', 64, 30_000_000n),
    timestamp,
    extraData: hexBytes(g.extraData, 'extraData', {}, NONE),
    coinbase: hexBytes(g.coinbase, 'coinbase', { length: 20 }, new Uint8Array(20)),
    nonce: uint64Bytes(hexOrDecimal(g.nonce, 'nonce', 64, 0n)),
    alloc,
    minDifficulty,
  };
}

/** The genesis block's header, given the state root its alloc produces. */
export function genesisHeader(g: Genesis, stateRoot: Uint8Array): BlockHeader {
  return {
    parentHash: new Uint8Array(32),
    miner: g.coinbase,
    stateRoot,
    transactionsRoot: EMPTY_ROOT,
    receiptsRoot: EMPTY_ROOT,
    difficulty: g.difficulty,
    number: 0n,
    gasLimit: g.gasLimit,
    gasUsed: 0n,
    timestamp: g.timestamp,
    extraData: g.extraData,
    nonce: g.nonce,
  };
}
