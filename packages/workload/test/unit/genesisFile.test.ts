/**
 * The genesis: parseGenesis accepts it, the streamed file is the same document, and the real
 * token contract run by @ethereumjs/vm over it sees every balance and moves tokens.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTxFromRLP } from '@ethereumjs/tx';
import { Address, bytesToBigInt } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { runTx } from '@ethereumjs/vm';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { defaultChainRules } from '@monsoon/execution';
import { parseGenesis } from '@monsoon/protocol';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { bytesToHex, toHex as hex } from '@monsoon/util';
import {
  AccountSet,
  buildGenesis,
  DEFAULT_TOKEN_ADDRESS,
  defaultGenesisOptions,
  encodeBalanceOf,
  encodeTokenTransfer,
  encodeTotalSupply,
  functionSelector,
  signTransaction,
  TOKEN_TOTAL_SUPPLY_SLOT,
  TRANSFER_EVENT_TOPIC,
  TrafficGenerator,
  tokenAllowanceSlot,
  tokenBalanceSlot,
  tokenRuntimeCode,
  WorkloadErrorCode,
  writeGenesisFile,
} from '@monsoon/workload';
import { nativeCommon, nextBlock, vmFromGenesis } from '../helpers/evm.js';

const SEED = new TextEncoder().encode('genesis test');
const COUNT = 50;
const ETHER = 10n ** 18n;

let accounts: AccountSet;
let dir: string;

beforeAll(async () => {
  accounts = await AccountSet.create({ seed: SEED, count: COUNT, eager: true });
  dir = await makeTmpDir();
});

afterAll(async () => {
  await removeDir(dir);
});

async function call(vm: VM, data: Uint8Array, caller?: Uint8Array): Promise<bigint> {
  const res = await vm.evm.runCall({
    to: new Address(DEFAULT_TOKEN_ADDRESS),
    data,
    ...(caller ? { caller: new Address(caller) } : {}),
  });
  expect(res.execResult.exceptionError).toBeUndefined();
  return bytesToBigInt(res.execResult.returnValue);
}

describe('buildGenesis', () => {
  it('is accepted by parseGenesis with every account, the token code and its storage', () => {
    const g = parseGenesis(buildGenesis(accounts));
    expect(g.chainId).toBe(1337n);
    expect(g.gasLimit).toBe(defaultChainRules.gasLimit);
    expect(g.difficulty).toBe(0n);
    expect(g.timestamp).toBe(0n);
    expect(g.alloc).toHaveLength(COUNT + 1);
    const token = g.alloc.find((a) => hex(a.address) === hex(DEFAULT_TOKEN_ADDRESS))!;
    expect(hex(token.code)).toBe(hex(tokenRuntimeCode()));
    expect(token.balance).toBe(0n);
    const storage = new Map(token.storage.map(([k, v]) => [hex(k), bytesToBigInt(v)]));
    expect(storage.size).toBe(COUNT + 1);
    const perAccount = defaultGenesisOptions.tokenBalance;
    expect(storage.get(hex(new Uint8Array(31).fill(0)) + '02')).toBe(perAccount * BigInt(COUNT));
    for (let i = 0; i < COUNT; i++) {
      const a = g.alloc.find((x) => hex(x.address) === hex(accounts.address(i)))!;
      expect(a.balance).toBe(1_000_000n * ETHER);
      expect(a.nonce).toBe(0n);
      expect(storage.get(hex(tokenBalanceSlot(accounts.address(i))))).toBe(perAccount);
    }
  });

  it('takes the chain id, gas limit, timestamp, balances and token address from the options', () => {
    const tokenAddress = new Uint8Array(20).fill(0xaa);
    const doc = buildGenesis(accounts, {
      chainId: 99n,
      gasLimit: 8_000_000n,
      timestamp: 1_700_000_000n,
      balance: 5n,
      tokenBalance: 7n,
      tokenAddress,
    });
    expect(doc.config.chainId).toBe(99);
    expect(doc.config.shanghaiTime).toBe(0);
    const g = parseGenesis(doc);
    expect([g.chainId, g.gasLimit, g.timestamp]).toEqual([99n, 8_000_000n, 1_700_000_000n]);
    const token = g.alloc.find((a) => hex(a.address) === hex(tokenAddress))!;
    expect(token.storage).toContainEqual([tokenBalanceSlot(accounts.address(3)), Uint8Array.of(7)]);
    expect(token.storage).toContainEqual([
      Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? Number(TOKEN_TOTAL_SUPPLY_SLOT) : 0)),
      Uint8Array.of(0x01, 0x5e), // 7 × 50 = 350
    ]);
    expect(g.alloc.filter((a) => a.balance === 5n)).toHaveLength(COUNT);
  });

  it('writes geth-compatible 32-byte storage keys and values', () => {
    const token = buildGenesis(accounts).alloc[bytesToHex(DEFAULT_TOKEN_ADDRESS)]!;
    for (const [k, v] of Object.entries(token.storage!)) {
      expect(k).toMatch(/^0x[0-9a-f]{64}$/);
      expect(v).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });

  it('refuses options out of range', () => {
    const max = (1n << 256n) - 1n;
    for (const bad of [
      { chainId: 0n },
      { balance: max + 1n },
      { tokenBalance: max },
      { tokenAddress: new Uint8Array(19) },
    ]) {
      expect(() => buildGenesis(accounts, bad)).toThrow(
        expect.objectContaining({ code: WorkloadErrorCode.BadOptions }),
      );
    }
  });
});

describe('writeGenesisFile', () => {
  it('streams exactly JSON.stringify(buildGenesis(...)), with progress over both passes', async () => {
    // Enough accounts for several chunks of 8192 in each pass.
    const big = {
      count: 20_000,
      address: (i: number) => accounts.address(i % COUNT).map((b, k) => (k < 4 ? (i >> (8 * k)) & 0xff : b)),
    };
    const file = join(dir, 'genesis.json');
    const progress: [number, number][] = [];
    const summary = await writeGenesisFile(file, big, { tokenBalance: 3n }, (d, t) => progress.push([d, t]));
    const text = await readFile(file, 'utf8');
    expect(text).toBe(JSON.stringify(buildGenesis(big, { tokenBalance: 3n })));
    expect(summary).toEqual({
      file,
      bytes: Buffer.byteLength(text),
      allocEntries: 20_001,
      totalSupply: 60_000n,
    });
    expect(progress.at(-1)).toEqual([40_000, 40_000]);
    expect(progress.map(([d]) => d)).toEqual([8192, 16384, 20000, 28192, 36384, 40000]);
    expect(parseGenesis(JSON.parse(text)).alloc).toHaveLength(20_001);
  });

  it('writes an empty storage map when nobody holds tokens', async () => {
    const file = join(dir, 'no-tokens.json');
    await writeGenesisFile(file, accounts, { tokenBalance: 0n });
    const doc = JSON.parse(await readFile(file, 'utf8'));
    expect(doc).toEqual(buildGenesis(accounts, { tokenBalance: 0n }));
    expect(doc.alloc[bytesToHex(DEFAULT_TOKEN_ADDRESS)].storage).toEqual({});
  });
});

describe('the token contract over the genesis', () => {
  let vm: VM;
  const perAccount = 1_000n * ETHER;

  beforeAll(async () => {
    vm = await vmFromGenesis(parseGenesis(buildGenesis(accounts, { tokenBalance: perAccount })));
  });

  it('reads every balance and the total supply from the genesis storage', async () => {
    for (let i = 0; i < COUNT; i += 7)
      expect(await call(vm, encodeBalanceOf(accounts.address(i)))).toBe(perAccount);
    expect(await call(vm, encodeTotalSupply())).toBe(perAccount * BigInt(COUNT));
    expect(await call(vm, encodeBalanceOf(new Uint8Array(20).fill(9)))).toBe(0n);
    expect(await call(vm, functionSelector('decimals()'))).toBe(18n);
  });

  it('moves tokens and emits Transfer for a generator transaction run with runTx', async () => {
    const gen = new TrafficGenerator(
      { erc20Share: 1, minTokenAmount: 5n * ETHER, maxTokenAmount: 6n * ETHER },
      { accounts },
    );
    const t = gen.next();
    expect(t.kind).toBe('erc20');
    const from = accounts.address(t.from);
    const to = accounts.address(t.to);
    const common = nativeCommon();
    const tx = createTxFromRLP(t.raw, { common });
    const res = await runTx(vm, { tx, block: nextBlock(common) });
    expect(res.execResult.exceptionError).toBeUndefined();
    expect(res.totalGasSpent).toBeLessThan(100_000n);
    expect(await call(vm, encodeBalanceOf(from))).toBe(perAccount - t.tokenAmount);
    expect(await call(vm, encodeBalanceOf(to))).toBe(perAccount + t.tokenAmount);
    expect(await call(vm, encodeTotalSupply())).toBe(perAccount * BigInt(COUNT));
    expect(res.receipt.logs).toHaveLength(1);
    const [address, topics, data] = res.receipt.logs[0]!;
    expect(hex(address)).toBe(hex(DEFAULT_TOKEN_ADDRESS));
    expect(topics.map(hex)).toEqual([
      hex(TRANSFER_EVENT_TOPIC),
      '0'.repeat(24) + hex(from),
      '0'.repeat(24) + hex(to),
    ]);
    expect(bytesToBigInt(data)).toBe(t.tokenAmount);
    const sender = await vm.stateManager.getAccount(new Address(from));
    expect(sender!.nonce).toBe(1n);
    // The sender paid the base fee plus the tip, for the gas used.
    expect(sender!.balance).toBe(1_000_000n * ETHER - res.totalGasSpent * 2_000_000_000n);
  });

  it('reverts a transfer of more than the balance, leaving balances alone', async () => {
    const i = 40;
    const before = await call(vm, encodeBalanceOf(accounts.address(i)));
    const signed = signTransaction(
      {
        type: 'eip1559',
        chainId: 1337n,
        nonce: 0n,
        gasLimit: 100_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        to: DEFAULT_TOKEN_ADDRESS,
        value: 0n,
        data: encodeTokenTransfer(accounts.address(41), before + 1n),
      },
      accounts.privateKey(i),
    );
    const common = nativeCommon();
    const res = await runTx(vm, { tx: createTxFromRLP(signed.raw, { common }), block: nextBlock(common) });
    expect(res.execResult.exceptionError?.error).toBe('revert');
    // ERC20InsufficientBalance(sender, balance, needed)
    expect(hex(res.execResult.returnValue.subarray(0, 4))).toBe(
      hex(functionSelector('ERC20InsufficientBalance(address,uint256,uint256)')),
    );
    expect(res.receipt.logs).toHaveLength(0);
    expect(await call(vm, encodeBalanceOf(accounts.address(i)))).toBe(before);
    expect(await call(vm, encodeBalanceOf(accounts.address(41)))).toBe(before);
  });

  it('approve and transferFrom use the documented allowance slot', async () => {
    const owner = accounts.address(10);
    const spender = accounts.address(11);
    const approve = new Uint8Array(68);
    approve.set(functionSelector('approve(address,uint256)'));
    approve.set(spender, 16);
    approve[67] = 100;
    expect(await call(vm, approve, owner)).toBe(1n);
    const stored = await vm.stateManager.getStorage(
      new Address(DEFAULT_TOKEN_ADDRESS),
      tokenAllowanceSlot(owner, spender),
    );
    expect(bytesToBigInt(stored)).toBe(100n);

    const transferFrom = new Uint8Array(100);
    transferFrom.set(functionSelector('transferFrom(address,address,uint256)'));
    transferFrom.set(owner, 16);
    transferFrom.set(accounts.address(12), 48);
    transferFrom[99] = 60;
    expect(await call(vm, transferFrom, spender)).toBe(1n);
    const allowance = new Uint8Array(68);
    allowance.set(functionSelector('allowance(address,address)'));
    allowance.set(owner, 16);
    allowance.set(spender, 48);
    expect(await call(vm, allowance)).toBe(40n);
    expect(await call(vm, encodeBalanceOf(accounts.address(12)))).toBe(perAccount + 60n);
  });
});
