/**
 * The load test's genesis: a geth-style genesis.json (what `parseGenesis` in @monsoon/protocol
 * reads) in which every workload account holds ether and MonsoonToken, and the token contract
 * sits at a fixed address with its balances already in storage (it has no constructor or mint).
 *
 * Two producers of the same document: {@link buildGenesis} returns it as an object (fine up to
 * ~100k accounts), {@link writeGenesisFile} streams it to a file in chunks (a million accounts
 * make ~250 MB of JSON, too big for one string). The file's bytes are exactly
 * `JSON.stringify(buildGenesis(accounts, opts))`.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { defaultChainRules } from '@monsoon/execution';
import { bigintToBytes, bytesToHex, quantityToHex, toHex } from '@monsoon/util';
import type { ProgressCallback } from './accounts.js';
import { tokenArtifact } from './tokenArtifact.js';
import { DEFAULT_TOKEN_ADDRESS, TOKEN_TOTAL_SUPPLY_SLOT, tokenBalanceSlots } from './tokenStorage.js';
import { WorkloadError, WorkloadErrorCode } from './workloadError.js';

/** Anything that lists 20-byte addresses by index, such as an {@link AccountSet}. */
export interface AddressSource {
  readonly count: number;
  address(index: number): Uint8Array;
}

/** What goes into the genesis besides the accounts. */
export interface GenesisOptions {
  /** `config.chainId`; transactions must be signed for it. */
  readonly chainId: bigint;
  /** The genesis block's gas limit (the chain keeps it). */
  readonly gasLimit: bigint;
  /** The genesis block's timestamp, seconds. */
  readonly timestamp: bigint;
  /** The genesis block's extraData. */
  readonly extraData: Uint8Array;
  /** Wei every account starts with. */
  readonly balance: bigint;
  /** Token units (18 decimals) every account starts with; `totalSupply` is this × the number of accounts. */
  readonly tokenBalance: bigint;
  /** Where the token contract lives. */
  readonly tokenAddress: Uint8Array;
  /**
   * The chain's difficulty rule (`config.monsoon.minDifficulty`): the least difficulty of a block.
   * 0 (the default here, for benchmarks) lets miners seal without proof of work, and says so in the file.
   */
  readonly minDifficulty: bigint;
}

const ETHER = 10n ** 18n;

/** One million ether and one million tokens per account, on the chain's default id and gas limit. */
export const defaultGenesisOptions: GenesisOptions = {
  chainId: defaultChainRules.chainId,
  gasLimit: defaultChainRules.gasLimit,
  timestamp: 0n,
  extraData: new Uint8Array(0),
  balance: 1_000_000n * ETHER,
  tokenBalance: 1_000_000n * ETHER,
  tokenAddress: DEFAULT_TOKEN_ADDRESS,
  minDifficulty: 0n,
};

/** One `alloc` entry, as geth writes it: hex quantities, 32-byte storage keys and values. */
export interface GenesisAllocEntry {
  balance: string;
  code?: string;
  storage?: Record<string, string>;
}

/**
 * A geth-style genesis document. `config` names every fork up to Shanghai as active from the
 * start, which is what the chain runs (geth would read it the same way).
 */
export interface GenesisDocument {
  config: Record<string, number | Record<string, number>>;
  nonce: string;
  timestamp: string;
  extraData: string;
  gasLimit: string;
  difficulty: string;
  mixHash: string;
  coinbase: string;
  alloc: Record<string, GenesisAllocEntry>;
}

/** What {@link writeGenesisFile} wrote. */
export interface GenesisFileSummary {
  readonly file: string;
  readonly bytes: number;
  /** Accounts plus the token contract. */
  readonly allocEntries: number;
  readonly totalSupply: bigint;
}

/** Accounts per chunk of the streamed file, and between two progress callbacks. */
export const GENESIS_CHUNK_ACCOUNTS = 8_192;
const MAX_UINT256 = (1n << 256n) - 1n;

function resolveOptions(accounts: AddressSource, opts: Partial<GenesisOptions>): GenesisOptions {
  const o = { ...defaultGenesisOptions, ...opts };
  const bad = (field: string, expected: string, found: unknown): never => {
    throw new WorkloadError(
      WorkloadErrorCode.BadOptions,
      `genesis ${field}: expected ${expected}, found ${String(found)}`,
      {
        field,
        expected,
        found,
      },
    );
  };
  if (!Number.isSafeInteger(accounts.count) || accounts.count < 1)
    bad('accounts', 'at least one account', accounts.count);
  if (o.chainId < 1n || o.chainId > BigInt(Number.MAX_SAFE_INTEGER))
    bad('chainId', 'an integer in [1, 2^53)', o.chainId);
  if (o.gasLimit < 0n || o.gasLimit >= 1n << 64n) bad('gasLimit', 'a uint64', o.gasLimit);
  if (o.timestamp < 0n || o.timestamp >= 1n << 64n) bad('timestamp', 'a uint64', o.timestamp);
  if (o.balance < 0n || o.balance > MAX_UINT256) bad('balance', 'a uint256', o.balance);
  if (o.tokenBalance < 0n || o.tokenBalance * BigInt(accounts.count) > MAX_UINT256) {
    bad('tokenBalance', 'a total supply (tokenBalance × accounts) that fits uint256', o.tokenBalance);
  }
  if (o.minDifficulty < 0n || o.minDifficulty > BigInt(Number.MAX_SAFE_INTEGER))
    bad('minDifficulty', 'an integer in [0, 2^53)', o.minDifficulty);
  if (o.tokenAddress.length !== 20)
    bad('tokenAddress', 'a 20-byte address', `${o.tokenAddress.length} bytes`);
  return o;
}

/** Everything before `alloc`, in the document's key order. */
function header(o: GenesisOptions): Omit<GenesisDocument, 'alloc'> {
  return {
    config: {
      chainId: Number(o.chainId),
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      mergeNetsplitBlock: 0,
      shanghaiTime: 0,
      terminalTotalDifficulty: 0,
      monsoon: { minDifficulty: Number(o.minDifficulty) },
    },
    nonce: '0x0000000000000000',
    timestamp: quantityToHex(o.timestamp),
    extraData: bytesToHex(o.extraData),
    gasLimit: quantityToHex(o.gasLimit),
    difficulty: '0x0',
    mixHash: bytesToHex(new Uint8Array(32)),
    coinbase: bytesToHex(new Uint8Array(20)),
  };
}

/** The addresses [from, to) back to back, and the same as one lowercase hex string (40 digits each). */
function addressBatch(accounts: AddressSource, from: number, to: number): { bytes: Uint8Array; hex: string } {
  const bytes = new Uint8Array(20 * (to - from));
  for (let i = from; i < to; i++) bytes.set(accounts.address(i), 20 * (i - from));
  return { bytes, hex: toHex(bytes) };
}

/** Visits the 0x-hex storage slots of the token balances of accounts [from, to), in order. */
function storageBatch(
  accounts: AddressSource,
  from: number,
  to: number,
  visit: (slotHex: string) => void,
): void {
  const { bytes } = addressBatch(accounts, from, to);
  const slotsHex = toHex(tokenBalanceSlots(bytes));
  for (let k = 0; k < to - from; k++) visit(`0x${slotsHex.slice(64 * k, 64 * k + 64)}`);
}

/** The genesis document for `accounts`, as one object. */
export function buildGenesis(accounts: AddressSource, opts: Partial<GenesisOptions> = {}): GenesisDocument {
  const o = resolveOptions(accounts, opts);
  const n = accounts.count;
  const totalSupply = o.tokenBalance * BigInt(n);
  const storage: Record<string, string> = {};
  if (totalSupply > 0n) {
    storage[bytesToHex(bigintToBytes(TOKEN_TOTAL_SUPPLY_SLOT, 32))] = bytesToHex(
      bigintToBytes(totalSupply, 32),
    );
    const valueHex = bytesToHex(bigintToBytes(o.tokenBalance, 32));
    for (let from = 0; from < n; from += GENESIS_CHUNK_ACCOUNTS) {
      storageBatch(accounts, from, Math.min(n, from + GENESIS_CHUNK_ACCOUNTS), (slot) => {
        storage[slot] = valueHex;
      });
    }
  }
  const alloc: Record<string, GenesisAllocEntry> = {
    [bytesToHex(o.tokenAddress)]: { balance: '0x0', code: tokenArtifact.runtimeBytecode, storage },
  };
  const balance = quantityToHex(o.balance);
  for (let i = 0; i < n; i++) alloc[bytesToHex(accounts.address(i))] = { balance };
  return { ...header(o), alloc };
}

/**
 * Streams the genesis document for `accounts` to `file` (atomically: a temporary file renamed
 * into place), in chunks of {@link GENESIS_CHUNK_ACCOUNTS} accounts, waiting for the stream to
 * drain so memory stays flat. `onProgress` counts accounts over two passes (token storage, then
 * balances), so its total is 2 × the number of accounts.
 */
export async function writeGenesisFile(
  file: string,
  accounts: AddressSource,
  opts: Partial<GenesisOptions> = {},
  onProgress?: ProgressCallback,
): Promise<GenesisFileSummary> {
  const o = resolveOptions(accounts, opts);
  const n = accounts.count;
  const totalSupply = o.tokenBalance * BigInt(n);
  const tmp = `${file}.tmp-${process.pid}`;
  const out = createWriteStream(tmp);
  let bytes = 0;
  let failed: unknown;
  out.on('error', (e) => {
    failed = e;
  });
  const write = async (s: string): Promise<void> => {
    if (failed !== undefined) throw failed;
    bytes += Buffer.byteLength(s);
    // events.once rejects if the stream errors while we wait.
    if (!out.write(s) && failed === undefined) await once(out, 'drain');
  };
  try {
    const head = JSON.stringify(header(o));
    const tokenKey = JSON.stringify(bytesToHex(o.tokenAddress));
    await write(
      `${head.slice(0, -1)},"alloc":{${tokenKey}:{"balance":"0x0","code":"${tokenArtifact.runtimeBytecode}","storage":{`,
    );
    if (totalSupply > 0n) {
      await write(
        `"${bytesToHex(bigintToBytes(TOKEN_TOTAL_SUPPLY_SLOT, 32))}":"${bytesToHex(bigintToBytes(totalSupply, 32))}"`,
      );
      const valueHex = bytesToHex(bigintToBytes(o.tokenBalance, 32));
      for (let from = 0; from < n; from += GENESIS_CHUNK_ACCOUNTS) {
        const to = Math.min(n, from + GENESIS_CHUNK_ACCOUNTS);
        const parts: string[] = [];
        storageBatch(accounts, from, to, (slot) => parts.push(`,"${slot}":"${valueHex}"`));
        await write(parts.join(''));
        onProgress?.(to, 2 * n);
      }
    } else {
      onProgress?.(n, 2 * n);
    }
    await write('}}');
    const balance = quantityToHex(o.balance);
    for (let from = 0; from < n; from += GENESIS_CHUNK_ACCOUNTS) {
      const to = Math.min(n, from + GENESIS_CHUNK_ACCOUNTS);
      const { hex } = addressBatch(accounts, from, to);
      const parts: string[] = [];
      for (let k = 0; k < to - from; k++)
        parts.push(`,"0x${hex.slice(40 * k, 40 * k + 40)}":{"balance":"${balance}"}`);
      await write(parts.join(''));
      onProgress?.(n + to, 2 * n);
    }
    await write('}}');
    out.end();
    await once(out, 'finish');
  } catch (e) {
    out.destroy();
    await rm(tmp, { force: true });
    throw e;
  }
  await rename(tmp, file);
  return { file, bytes, allocEntries: n + 1, totalSupply };
}
