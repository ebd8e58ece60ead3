/**
 * geth-style genesis.json: chain parameters and an `alloc` of accounts with balance, nonce, code
 * and storage. Every number may be a 0x-hex or decimal string (or a JSON number when small);
 * addresses may omit 0x. Anything else is refused with a BadGenesis error naming the field.
 */

import { EMPTY_ROOT } from '@monsoon/dsm-tree';
import { ProtocolError, ProtocolErrorCode } from '../protocolError.js';
import type { BlockHeader } from './blockHeader.js';

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
  readonly difficulty: bigint;
  readonly gasLimit: bigint;
  readonly timestamp: bigint;
  readonly extraData: Uint8Array;
  readonly coinbase: Uint8Array;
  readonly nonce: Uint8Array;
  readonly alloc: readonly GenesisAccount[];
}

function bad(field: string, message: string): never {
  throw new ProtocolError(ProtocolErrorCode.BadGenesis, `genesis ${field}: ${message}`, { field });
}

function quantity(v: unknown, field: string, bits: number, dflt?: bigint): bigint {
  if (v === undefined || v === null) {
    if (dflt !== undefined) return dflt;
    bad(field, 'missing');
  }
  let n: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) n = BigInt(v);
  else if (typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v)) n = BigInt(v);
  else if (typeof v === 'string' && /^(0x)?$/.test(v)) n = 0n;
  else if (typeof v === 'string' && /^[0-9]+$/.test(v)) n = BigInt(v);
  else return bad(field, `expected a 0x-hex or decimal quantity, found ${JSON.stringify(v)}`);
  if (n >= 1n << BigInt(bits)) bad(field, `does not fit ${bits} bits`);
  return n;
}

function bytes(v: unknown, field: string, len?: number, dflt?: Uint8Array): Uint8Array {
  if (v === undefined || v === null) {
    if (dflt !== undefined) return dflt;
    bad(field, 'missing');
  }
  if (typeof v !== 'string') return bad(field, `expected a hex string, found ${JSON.stringify(v)}`);
  const h = v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v;
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) bad(field, `not hex: ${JSON.stringify(v)}`);
  const b = new Uint8Array(Buffer.from(h, 'hex'));
  if (len !== undefined && b.length !== len) bad(field, `expected ${len} bytes, found ${b.length}`);
  return b;
}

/** Left-pads a storage slot or strips a value, as Ethereum stores them. */
function word(v: unknown, field: string): Uint8Array {
  const b = bytes(v, field);
  if (b.length > 32) bad(field, `more than 32 bytes (${b.length})`);
  return b;
}

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

/** Parses a genesis.json document (already JSON-parsed). */
export function parseGenesis(doc: unknown): Genesis {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) bad('', 'expected a JSON object');
  const g = doc as Record<string, unknown>;
  const config = (g.config ?? {}) as Record<string, unknown>;
  const alloc = g.alloc ?? {};
  if (typeof alloc !== 'object' || alloc === null || Array.isArray(alloc)) bad('alloc', 'expected an object');
  const accounts: GenesisAccount[] = [];
  const seen = new Set<string>();
  for (const [addr, raw] of Object.entries(alloc as Record<string, unknown>)) {
    const f = `alloc[${addr}]`;
    const address = bytes(addr, `${f} address`, 20);
    const key = Buffer.from(address).toString('hex');
    if (seen.has(key)) bad(f, 'address listed twice');
    seen.add(key);
    if (typeof raw !== 'object' || raw === null) bad(f, 'expected an object');
    const a = raw as Record<string, unknown>;
    const storage: [Uint8Array, Uint8Array][] = [];
    const st = a.storage ?? {};
    if (typeof st !== 'object' || st === null || Array.isArray(st)) bad(`${f}.storage`, 'expected an object');
    for (const [slot, value] of Object.entries(st as Record<string, unknown>)) {
      const s = word(slot, `${f}.storage slot`);
      const padded = new Uint8Array(32);
      padded.set(s, 32 - s.length);
      const v = stripZeros(word(value, `${f}.storage[${slot}]`));
      if (v.length > 0) storage.push([padded, v]);
    }
    accounts.push({
      address,
      nonce: quantity(a.nonce, `${f}.nonce`, 64, 0n),
      balance: quantity(a.balance, `${f}.balance`, 256, 0n),
      code: bytes(a.code, `${f}.code`, undefined, new Uint8Array(0)),
      storage,
    });
  }
  return {
    chainId: quantity(config.chainId, 'config.chainId', 64, 1337n),
    difficulty: quantity(g.difficulty, 'difficulty', 256, 0n),
    gasLimit: quantity(g.gasLimit, 'gasLimit', 64, 30_000_000n),
    timestamp: quantity(g.timestamp, 'timestamp', 64, 0n),
    extraData: bytes(g.extraData, 'extraData', undefined, new Uint8Array(0)),
    coinbase: bytes(g.coinbase, 'coinbase', 20, new Uint8Array(20)),
    nonce: bytes(g.nonce, 'nonce', 8, new Uint8Array(8)),
    alloc: accounts,
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
