/**
 * handleRpc without HTTP, over the fake backend: each method's parameters reach the backend as
 * the domain values they denote, answers have geth's JSON shapes (transactions checked against
 * ethers' own decoding of the raw bytes, blooms against a bloom computed here), and every kind
 * of bad input gets geth's code and message.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { fromHex, toHex } from '@monsoon/dsm-tree';
import type { Logger } from '@monsoon/edge';
import type { Log } from '@monsoon/execution';
import { getBytes, keccak256, Transaction, toBeHex, toQuantity } from 'ethers';
import {
  type BlockView,
  handleRpc,
  type Json,
  type RpcResponse,
  revertReason,
} from '../../../src/rpc/index.js';
import {
  alice,
  BASE_FEE,
  BOB_TOKENS,
  BROKEN,
  bob,
  CHAIN_ID,
  ETHER,
  errorData,
  type FakeBackend,
  type Fixture,
  GWEI,
  MINER,
  makeFixture,
  POOR,
  PRIORITY_FEE,
  panicData,
  signTransfer,
  TOKEN,
  TOKEN_CODE,
  tokenAbi,
} from './fakeBackend.js';

let f: Fixture;
let backend: FakeBackend;
beforeAll(async () => {
  f = await makeFixture();
  backend = f.backend;
});

const hex = (b: Uint8Array) => `0x${toHex(b)}`;
const word = (n: bigint) => toBeHex(n, 32);
const ALICE = alice.address.toLowerCase();
const BOB = bob.address.toLowerCase();

async function rpc(method: string, params?: unknown, b: FakeBackend = backend): Promise<RpcResponse> {
  const r = await handleRpc({ jsonrpc: '2.0', id: 7, method, params }, b);
  if (r === undefined || Array.isArray(r))
    throw new Error(`expected one response, found ${JSON.stringify(r)}`);
  expect(r.id).toBe(7);
  return r;
}

async function result(method: string, params?: unknown): Promise<Json> {
  const r = await rpc(method, params);
  if ('error' in r) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function failure(method: string, params?: unknown) {
  const r = await rpc(method, params);
  if (!('error' in r)) throw new Error(`${method} succeeded: ${JSON.stringify(r.result)}`);
  return r.error;
}

/** A logs bloom computed from the yellow paper's definition, independently of the code under test. */
function bloomOf(logs: readonly Log[]): string {
  const bloom = new Uint8Array(256);
  for (const item of logs.flatMap((l) => [l.address, ...l.topics])) {
    const h = getBytes(keccak256(item));
    for (let j = 0; j < 6; j += 2) {
      const bit = ((h[j]! << 8) | h[j + 1]!) & 2047;
      bloom[255 - Math.floor(bit / 8)]! |= 1 << (bit % 8);
    }
  }
  return hex(bloom);
}

/** The JSON geth gives for `raw`, with every field taken from ethers' decoding of it. */
function expectedTx(raw: string, at?: { block: BlockView; index: number }): Record<string, Json> {
  const tx = Transaction.from(raw);
  const sig = tx.signature!;
  const mined = at !== undefined;
  const out: Record<string, Json> = {
    blockHash: mined ? hex(at.block.hash) : null,
    blockNumber: mined ? toQuantity(at.block.header.number) : null,
    from: tx.from!.toLowerCase(),
    gas: toQuantity(tx.gasLimit),
    hash: tx.hash!,
    input: tx.data,
    nonce: toQuantity(tx.nonce),
    to: tx.to === null ? null : tx.to.toLowerCase(),
    transactionIndex: mined ? toQuantity(at.index) : null,
    value: toQuantity(tx.value),
    type: toQuantity(tx.type!),
    r: toQuantity(sig.r),
    s: toQuantity(sig.s),
  };
  if (tx.type === 2) {
    const tip = tx.maxPriorityFeePerGas!;
    const cap = tx.maxFeePerGas!;
    const paid = cap - BASE_FEE >= tip ? BASE_FEE + tip : cap;
    out.gasPrice = toQuantity(mined ? paid : cap);
    out.maxFeePerGas = toQuantity(cap);
    out.maxPriorityFeePerGas = toQuantity(tip);
  } else {
    out.gasPrice = toQuantity(tx.gasPrice!);
  }
  if (tx.type === 0) {
    out.chainId = toQuantity(CHAIN_ID);
    out.v = toQuantity(sig.networkV!);
  } else {
    out.chainId = toQuantity(tx.chainId);
    out.v = toQuantity(sig.yParity);
    out.yParity = toQuantity(sig.yParity);
    out.accessList = tx.accessList!.map((e) => ({
      address: e.address.toLowerCase(),
      storageKeys: e.storageKeys,
    }));
  }
  return out;
}

describe('handleRpc: simple methods', () => {
  it('answers chain and node facts', async () => {
    expect(await result('eth_chainId')).toBe('0x539');
    expect(await result('net_version', [])).toBe('1337');
    expect(await result('eth_blockNumber')).toBe('0x1');
    expect(await result('eth_accounts')).toEqual([]);
    expect(await result('eth_syncing')).toBe(false);
    // Behind: geth's object, quantities in hex.
    backend.sync = { startingBlock: 0x10n, currentBlock: 0x12n, highestBlock: 0x20n };
    try {
      expect(await result('eth_syncing')).toEqual({
        startingBlock: '0x10',
        currentBlock: '0x12',
        highestBlock: '0x20',
      });
    } finally {
      backend.sync = undefined;
    }
    expect(await result('net_listening')).toBe(true);
    expect(await result('web3_clientVersion')).toMatch(/^Monsoon\/v0\.1\.0\//);
    const custom = await handleRpc({ jsonrpc: '2.0', id: 1, method: 'web3_clientVersion' }, backend, {
      clientVersion: 'Monsoon/test',
    });
    expect(custom).toEqual({ jsonrpc: '2.0', id: 1, result: 'Monsoon/test' });
    expect(await result('web3_sha3', ['0x68656c6c6f'])).toBe(keccak256('0x68656c6c6f'));
  });

  it('answers fees', async () => {
    expect(await result('eth_gasPrice')).toBe(toQuantity(BASE_FEE + PRIORITY_FEE));
    expect(await result('eth_maxPriorityFeePerGas')).toBe(toQuantity(PRIORITY_FEE));
  });
});

describe('handleRpc: state queries', () => {
  it('reads a balance at each kind of block tag', async () => {
    expect(await result('eth_getBalance', [alice.address, 'latest'])).toBe(toQuantity(9n * ETHER));
    expect(backend.last('balance')).toEqual([fromHex(ALICE), { kind: 'latest' }]);
    expect(await result('eth_getBalance', [alice.address, '0x0'])).toBe(toQuantity(10n * ETHER));
    expect(backend.last('balance')[1]).toEqual({ kind: 'number', number: 0n });
    for (const t of ['earliest', 'pending'] as const) {
      await result('eth_getBalance', [ALICE, t]);
      expect(backend.last('balance')[1]).toEqual({ kind: t });
    }
    // safe and finalized reach the backend as the number confirmationDepth (12) below the head
    // (#1): the genesis on this short chain; with depth 0, the head itself.
    for (const t of ['safe', 'finalized'] as const) {
      await result('eth_getBalance', [ALICE, t]);
      expect(backend.last('balance')[1]).toEqual({ kind: 'number', number: 0n });
      await handleRpc({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ALICE, t] }, backend, {
        confirmationDepth: 0,
      });
      expect(backend.last('balance')[1]).toEqual({ kind: 'number', number: 1n });
    }
    // EIP-1898 objects, and a bare hash.
    expect(await result('eth_getBalance', [ALICE, { blockNumber: '0x0' }])).toBe(toQuantity(10n * ETHER));
    const h = hex(f.genesis.hash);
    await result('eth_getBalance', [ALICE, { blockHash: h, requireCanonical: true }]);
    expect(backend.last('balance')[1]).toEqual({
      kind: 'hash',
      hash: f.genesis.hash,
      requireCanonical: true,
    });
    await result('eth_getBalance', [ALICE, { blockHash: h }]);
    expect(backend.last('balance')[1]).toEqual({
      kind: 'hash',
      hash: f.genesis.hash,
      requireCanonical: false,
    });
    await result('eth_getBalance', [ALICE, h]);
    expect(backend.last('balance')[1]).toEqual({ kind: 'hash', hash: f.genesis.hash });
    await result('eth_getBalance', [ALICE, { blockNumber: 'safe' }]);
    expect(backend.last('balance')[1]).toEqual({ kind: 'number', number: 0n });
  });

  it('reads nonces, code and storage', async () => {
    expect(await result('eth_getTransactionCount', [bob.address, 'pending'])).toBe('0x2');
    expect(await result('eth_getTransactionCount', [bob.address, 'latest'])).toBe('0x1');
    expect(await result('eth_getCode', [TOKEN, 'latest'])).toBe(hex(TOKEN_CODE));
    expect(await result('eth_getCode', [ALICE, 'latest'])).toBe('0x');
    // geth's decodeHash: 0x optional, odd lengths padded, left-padded to 32 bytes.
    for (const key of ['0x1', '1', '0x01', word(1n)]) {
      expect(await result('eth_getStorageAt', [TOKEN, key, 'latest'])).toBe(word(0x2an));
      expect(backend.last('storageAt')[1]).toEqual(getBytes(word(1n)));
    }
    expect(await result('eth_getStorageAt', [TOKEN, '0x2', 'latest'])).toBe(word(0n));
  });

  it('refuses storage keys as geth does (a method error, not an invalid argument)', async () => {
    expect(await failure('eth_getStorageAt', [TOKEN, '0xzz', 'latest'])).toEqual({
      code: -32000,
      message: 'unable to decode storage key: hex string invalid',
    });
    expect(await failure('eth_getStorageAt', [TOKEN, `0x${'11'.repeat(33)}`, 'latest'])).toEqual({
      code: -32000,
      message: 'unable to decode storage key: hex string too long, want at most 32 bytes',
    });
    expect(await failure('eth_getProof', [TOKEN, ['0xq'], 'latest'])).toEqual({
      code: -32000,
      message: 'hex string invalid',
    });
  });

  it('answers eth_getProof with EIP-1186 fields, echoing keys as geth does', async () => {
    const full = word(2n);
    const r = await result('eth_getProof', [TOKEN, ['0x1', full], 'latest']);
    expect(backend.last('proof')).toEqual([
      fromHex(TOKEN),
      [getBytes(word(1n)), getBytes(full)],
      { kind: 'latest' },
    ]);
    expect(r).toEqual({
      address: TOKEN,
      accountProof: ['0xc180', '0xc28080'],
      balance: '0x5',
      codeHash: keccak256(TOKEN_CODE),
      nonce: '0x7',
      storageHash: word(0xabcn),
      storageProof: [
        { key: '0x1', value: '0x1', proof: ['0xc0'] },
        { key: full, value: '0x2', proof: ['0xc1'] },
      ],
    });
  });
});

describe('handleRpc: eth_call and eth_estimateGas', () => {
  it('passes the request as domain values, input before data, latest by default', async () => {
    const data = tokenAbi.encodeFunctionData('balanceOf', [bob.address]);
    const r = await result('eth_call', [
      { from: ALICE, to: TOKEN, gas: '0x5208', gasPrice: '0x3b9aca00', value: '0x0', data, nonce: '0x3' },
    ]);
    expect(BigInt(r as string)).toBe(BOB_TOKENS);
    expect(backend.last('call')).toEqual([
      {
        from: fromHex(ALICE),
        to: fromHex(TOKEN),
        gas: 21000n,
        gasPrice: GWEI,
        value: 0n,
        data: getBytes(data),
        nonce: 3n,
      },
      { kind: 'latest' },
    ]);
    await result('eth_call', [{ to: TOKEN, input: data, data }, 'pending']);
    expect(backend.last('call')).toEqual([{ to: fromHex(TOKEN), data: getBytes(data) }, { kind: 'pending' }]);
    await result('eth_call', [
      {
        to: TOKEN,
        input: data,
        maxFeePerGas: '0x2',
        maxPriorityFeePerGas: '0x1',
        chainId: '0x539',
        accessList: [{ address: TOKEN, storageKeys: [word(1n)] }],
      },
      null,
      {},
    ]);
    expect(backend.last('call')).toEqual([
      {
        to: fromHex(TOKEN),
        data: getBytes(data),
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
        accessList: [{ address: fromHex(TOKEN), storageKeys: [getBytes(word(1n))] }],
      },
      { kind: 'latest' },
    ]);
  });

  it("refuses what geth's call defaults refuse", async () => {
    const cases: [Record<string, string>, string][] = [
      [
        { to: TOKEN, data: '0x01', input: '0x02' },
        'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data',
      ],
      [
        { to: TOKEN, gasPrice: '0x1', maxFeePerGas: '0x1' },
        'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified',
      ],
      [
        { to: TOKEN, maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x2' },
        'maxFeePerGas (1) < maxPriorityFeePerGas (2)',
      ],
      [{ to: TOKEN, chainId: '0x1' }, "chainId does not match node's (have=1, want=1337)"],
    ];
    for (const [args, message] of cases) {
      expect(await failure('eth_call', [args])).toEqual({ code: -32000, message });
    }
    expect(await failure('eth_call', [{ to: TOKEN }, 'latest', { [ALICE]: { balance: '0x1' } }])).toEqual({
      code: -32602,
      message: 'invalid argument 2: state overrides are not supported',
    });
    expect(await failure('eth_call', [{ to: TOKEN }, 'latest', null, {}, 1])).toEqual({
      code: -32602,
      message: 'too many arguments, want at most 4',
    });
  });

  it('answers reverts with code 3, the decoded reason and the revert data', async () => {
    const call = (amount: bigint) =>
      failure('eth_call', [
        { to: TOKEN, data: tokenAbi.encodeFunctionData('transfer', [bob.address, amount]) },
      ]);
    expect(await call(5000n)).toEqual({
      code: 3,
      message: 'execution reverted: not enough tokens',
      data: hex(errorData('not enough tokens')),
    });
    expect(await call(0n)).toEqual({
      code: 3,
      message: 'execution reverted: division or modulo by zero',
      data: hex(panicData(0x12n)),
    });
    // A custom error: no reason geth can state, the data for the caller's ABI.
    expect(await call(999n)).toEqual({
      code: 3,
      message: 'execution reverted',
      data: tokenAbi.encodeErrorResult('Insufficient', [5n, 999n]),
    });
    expect(await failure('eth_call', [{ to: TOKEN, data: '0x' }])).toEqual({
      code: 3,
      message: 'execution reverted',
      data: '0x',
    });
  });

  it('decodes revert reasons as geth does', () => {
    expect(revertReason(errorData(''))).toBe('');
    expect(revertReason(panicData(0x01n))).toBe('assert(false)');
    expect(revertReason(panicData(0x99n))).toBe('unknown panic code: 0x99');
    // Truncated: the string's length points past the data.
    expect(revertReason(errorData('not enough tokens').subarray(0, 4 + 64 + 5))).toBeUndefined();
    expect(revertReason(Uint8Array.of(0x08, 0xc3, 0x79))).toBeUndefined();
    expect(revertReason(getBytes(tokenAbi.encodeErrorResult('Insufficient', [1n, 2n])))).toBeUndefined();
  });

  it('estimates gas, and answers execution errors with their geth message', async () => {
    const data = tokenAbi.encodeFunctionData('transfer', [bob.address, 5n]);
    expect(await result('eth_estimateGas', [{ from: ALICE, to: TOKEN, data }])).toBe(toQuantity(53_000n));
    expect(backend.last('estimateGas')[1]).toEqual({ kind: 'latest' });
    expect(await result('eth_estimateGas', [{ from: ALICE, to: BOB, value: '0x1' }, '0x1'])).toBe('0x5208');
    expect(backend.last('estimateGas')[1]).toEqual({ kind: 'number', number: 1n });
    expect(await failure('eth_estimateGas', [{ from: POOR, to: BOB }])).toEqual({
      code: -32000,
      message:
        'insufficient funds for gas * price + value: balance 0, tx cost 21000000000000, overshot 21000000000000',
    });
    const big = tokenAbi.encodeFunctionData('transfer', [bob.address, 5000n]);
    expect(await failure('eth_estimateGas', [{ from: ALICE, to: TOKEN, data: big }])).toMatchObject({
      code: 3,
      message: 'execution reverted: not enough tokens',
    });
  });
});

describe('handleRpc: eth_feeHistory', () => {
  it('takes hex or decimal counts and answers per-block series', async () => {
    expect(await result('eth_feeHistory', ['0x2', 'latest', [25, 75]])).toEqual({
      oldestBlock: '0x0',
      baseFeePerGas: [toQuantity(BASE_FEE), toQuantity(BASE_FEE), toQuantity(BASE_FEE)],
      gasUsedRatio: [0, 106_000 / 30_000_000],
      reward: [
        [toQuantity(25n * GWEI), toQuantity(75n * GWEI)],
        [toQuantity(25n * GWEI), toQuantity(75n * GWEI)],
      ],
    });
    expect(backend.last('feeHistory')).toEqual([2, { kind: 'latest' }, [25, 75]]);
    const r = (await result('eth_feeHistory', [1, '0x1'])) as Record<string, Json>;
    expect(r).not.toHaveProperty('reward');
    expect(backend.last('feeHistory')).toEqual([1, { kind: 'number', number: 1n }, []]);
    await result('eth_feeHistory', ['5000', 'latest', []]);
    expect(backend.last('feeHistory')[0]).toBe(1024);
    const before = backend.seen.length;
    expect(await result('eth_feeHistory', ['0x0', 'latest', []])).toEqual({
      oldestBlock: '0x0',
      baseFeePerGas: [],
      gasUsedRatio: [],
    });
    expect(backend.seen.length).toBe(before);
  });

  it('refuses bad counts and percentiles with geth messages', async () => {
    expect(await failure('eth_feeHistory', ['abc', 'latest', []])).toEqual({
      code: -32602,
      message: 'invalid argument 0: invalid hex or decimal integer "abc"',
    });
    expect(await failure('eth_feeHistory', [2, 'latest', [50, 25]])).toEqual({
      code: -32000,
      message: 'invalid reward percentile: #0:50.000000 >= #1:25.000000',
    });
    expect(await failure('eth_feeHistory', [2, 'latest', [101]])).toEqual({
      code: -32000,
      message: 'invalid reward percentile: 101.000000',
    });
    expect(await failure('eth_feeHistory', [2, 'latest', ['50']])).toEqual({
      code: -32602,
      message: 'invalid argument 2: json: cannot unmarshal string into Go value of type float64',
    });
  });
});

describe('handleRpc: transactions and receipts', () => {
  it('answers each mined transaction type with the fields it was signed with', async () => {
    for (let i = 0; i < f.raws.length; i++) {
      const r = await result('eth_getTransactionByHash', [f.hashes[i]]);
      expect(r).toEqual(expectedTx(f.raws[i]!, { block: f.block1, index: i }));
    }
    // The EIP-1559 one paid base fee + tip (1 + 0.5 gwei), below its 3 gwei cap.
    expect((await result('eth_getTransactionByHash', [f.hashes[2]])) as Record<string, Json>).toMatchObject({
      gasPrice: toQuantity(BASE_FEE + GWEI / 2n),
      to: null,
    });
  });

  it('answers a pending transaction with no block and its fee cap as gasPrice', async () => {
    const r = await result('eth_getTransactionByHash', [f.pendingHash]);
    expect(r).toEqual(expectedTx(f.pendingRaw));
    expect(r).toMatchObject({ blockHash: null, gasPrice: toQuantity(4n * GWEI) });
    expect(await result('eth_getTransactionByHash', [word(0xdeadn)])).toBeNull();
    expect(await result('eth_getTransactionReceipt', [word(0xdeadn)])).toBeNull();
  });

  it('answers receipts with block-wide log indexes and the logs bloom', async () => {
    const r1 = await result('eth_getTransactionReceipt', [f.hashes[1]]);
    const block = { blockHash: hex(f.block1.hash), blockNumber: '0x1' };
    const logs = f.receipts[1]!.logs;
    expect(r1).toEqual({
      ...block,
      contractAddress: null,
      cumulativeGasUsed: toQuantity(56_000n),
      effectiveGasPrice: toQuantity(2n * GWEI),
      from: ALICE,
      gasUsed: toQuantity(35_000n),
      logs: logs.map((l, i) => ({
        address: TOKEN,
        topics: l.topics.map(hex),
        data: hex(l.data),
        ...block,
        transactionHash: f.hashes[1],
        transactionIndex: '0x1',
        logIndex: toQuantity(i),
        removed: false,
      })),
      logsBloom: bloomOf(logs),
      status: '0x1',
      to: TOKEN,
      transactionHash: f.hashes[1],
      transactionIndex: '0x1',
      type: '0x1',
    });
    const r2 = (await result('eth_getTransactionReceipt', [f.hashes[2]])) as Record<string, Json>;
    expect(r2).toMatchObject({ to: null, contractAddress: f.created, type: '0x2', status: '0x1' });
    expect((r2.logs as Record<string, Json>[]).map((l) => l.logIndex)).toEqual(['0x2']);
    const r0 = (await result('eth_getTransactionReceipt', [f.hashes[0]])) as Record<string, Json>;
    expect(r0).toMatchObject({ logs: [], logsBloom: hex(new Uint8Array(256)), to: BOB });
  });

  it('answers a block’s receipts in order (eth_getBlockReceipts), null for no block', async () => {
    const all = (await result('eth_getBlockReceipts', ['0x1'])) as Json[];
    const one = await Promise.all(f.hashes.map((h) => result('eth_getTransactionReceipt', [h])));
    expect(all).toEqual(one);
    expect(await result('eth_getBlockReceipts', [hex(f.block1.hash)])).toEqual(one);
    expect(await result('eth_getBlockReceipts', ['latest'])).toEqual(one);
    expect(await result('eth_getBlockReceipts', ['0x0'])).toEqual([]);
    expect(await result('eth_getBlockReceipts', ['0x9'])).toBeNull();
  });

  it('answers raw transactions by hash, mined and pending (eth_getRawTransactionByHash)', async () => {
    expect(await result('eth_getRawTransactionByHash', [f.hashes[1]])).toBe(f.raws[1]);
    expect(await result('eth_getRawTransactionByHash', [f.pendingHash])).toBe(f.pendingRaw);
    expect(await result('eth_getRawTransactionByHash', [word(0xdeadn)])).toBeNull();
  });

  it('answers eth_createAccessList as geth writes it, checking the call as eth_call does', async () => {
    const data = tokenAbi.encodeFunctionData('transfer', [BOB, 5n]);
    expect(await result('eth_createAccessList', [{ from: ALICE, to: TOKEN, input: data }])).toEqual({
      accessList: [{ address: TOKEN, storageKeys: [word(1n), word(2n)] }],
      gasUsed: toQuantity(30_100n),
    });
    expect(backend.last('createAccessList')).toEqual([
      { from: fromHex(ALICE), to: fromHex(TOKEN), data: getBytes(data) },
      { kind: 'latest' },
    ]);
    const reverting = tokenAbi.encodeFunctionData('transfer', [BOB, 5000n]);
    expect(await result('eth_createAccessList', [{ to: TOKEN, data: reverting }, '0x1'])).toEqual({
      accessList: [{ address: TOKEN, storageKeys: [word(1n), word(2n)] }],
      error: 'execution reverted',
      gasUsed: toQuantity(24_200n),
    });
    expect(backend.last('createAccessList')[1]).toEqual({ kind: 'number', number: 1n });
    expect(
      await failure('eth_createAccessList', [{ to: TOKEN, gasPrice: '0x1', maxFeePerGas: '0x2' }]),
    ).toEqual({
      code: -32000,
      message: 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified',
    });
  });

  it('sends raw transactions, answering refusals with the geth message only', async () => {
    const next = await signTransfer(bob, 2, 2, alice.address);
    expect(await result('eth_sendRawTransaction', [next])).toBe(Transaction.from(next).hash);
    expect(backend.last('sendRawTransaction')).toEqual([getBytes(next)]);
    expect(await failure('eth_sendRawTransaction', [f.raws[2]])).toEqual({
      code: -32000,
      message: 'nonce too low: next nonce 2, tx nonce 0',
    });
    const otherChain = await bob.signTransaction({
      type: 0,
      chainId: 1,
      nonce: 5,
      gasPrice: GWEI,
      gasLimit: 21_000,
    });
    expect(await failure('eth_sendRawTransaction', [otherChain])).toEqual({
      code: -32000,
      message: 'transaction is signed for chain 1 (v = 37), expected chain 1337',
    });
  });
});

describe('handleRpc: blocks', () => {
  const headerJson = (b: BlockView) => ({
    number: toQuantity(b.header.number),
    hash: hex(b.hash),
    parentHash: hex(b.header.parentHash),
    nonce: hex(b.header.nonce),
    mixHash: `0x${'0'.repeat(64)}`,
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    stateRoot: hex(b.header.stateRoot),
    miner: MINER,
    difficulty: toQuantity(b.header.difficulty),
    extraData: hex(b.header.extraData),
    gasLimit: toQuantity(30_000_000n),
    gasUsed: toQuantity(b.header.gasUsed),
    timestamp: toQuantity(b.header.timestamp),
    transactionsRoot: hex(b.header.transactionsRoot),
    receiptsRoot: hex(b.header.receiptsRoot),
    baseFeePerGas: toQuantity(GWEI),
    withdrawalsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
    size: toQuantity(b.size),
    uncles: [],
    withdrawals: [],
  });

  it('answers a block with transaction hashes, by number and by hash', async () => {
    const expected = {
      ...headerJson(f.block1),
      logsBloom: bloomOf(f.receipts.flatMap((r) => r.logs)),
      totalDifficulty: '0x3e8',
      transactions: f.hashes,
    };
    expect(await result('eth_getBlockByNumber', ['0x1', false])).toEqual(expected);
    expect(await result('eth_getBlockByNumber', ['latest', false])).toEqual(expected);
    expect(await result('eth_getBlockByHash', [hex(f.block1.hash), false])).toEqual(expected);
    expect(await result('eth_getBlockByNumber', ['earliest', false])).toEqual({
      ...headerJson(f.genesis),
      logsBloom: hex(new Uint8Array(256)),
      transactions: [],
    });
    expect(await result('eth_getBlockByNumber', ['0x9', false])).toBeNull();
    expect(await result('eth_getBlockByHash', [word(1n), true])).toBeNull();
  });

  it('answers a block with full transactions, recovering senders the view lacks', async () => {
    const full = f.raws.map((raw, index) => expectedTx(raw, { block: f.block1, index }));
    expect(await result('eth_getBlockByNumber', ['0x1', true])).toMatchObject({ transactions: full });
    const { senders: _, ...withoutSenders } = f.block1;
    const saved = backend.blocks[1]!;
    backend.blocks[1] = withoutSenders;
    try {
      expect(await result('eth_getBlockByNumber', ['0x1', true])).toMatchObject({ transactions: full });
    } finally {
      backend.blocks[1] = saved;
    }
  });

  it('counts and indexes block transactions', async () => {
    expect(await result('eth_getBlockTransactionCountByNumber', ['0x1'])).toBe('0x3');
    expect(await result('eth_getBlockTransactionCountByHash', [hex(f.genesis.hash)])).toBe('0x0');
    expect(await result('eth_getBlockTransactionCountByNumber', ['0x5'])).toBeNull();
    expect(await result('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x2'])).toEqual(
      expectedTx(f.raws[2]!, { block: f.block1, index: 2 }),
    );
    expect(await result('eth_getTransactionByBlockHashAndIndex', [hex(f.block1.hash), '0x0'])).toEqual(
      expectedTx(f.raws[0]!, { block: f.block1, index: 0 }),
    );
    expect(await result('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x3'])).toBeNull();
  });

  it("passes a backend's RpcError through", async () => {
    expect(await failure('eth_getBlockByNumber', ['pending', false])).toEqual({
      code: -32000,
      message: 'pending block not available',
    });
  });
});

describe('handleRpc: parameter errors', () => {
  const A = ALICE;
  const cases: [string, unknown, string][] = [
    [
      'eth_getBalance',
      [A.slice(2), 'latest'],
      'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address',
    ],
    [
      'eth_getBalance',
      ['0xabc', 'latest'],
      'invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type common.Address',
    ],
    [
      'eth_getBalance',
      [A.slice(0, 40), 'latest'],
      'invalid argument 0: hex string has length 38, want 40 for common.Address',
    ],
    [
      'eth_getBalance',
      [`0x${'zz'.repeat(20)}`, 'latest'],
      'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type common.Address',
    ],
    [
      'eth_getBalance',
      [5, 'latest'],
      'invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Address',
    ],
    ['eth_getBalance', [A, '1'], 'invalid argument 1: hex string without 0x prefix'],
    ['eth_getBalance', [A, '0x01'], 'invalid argument 1: hex number with leading zero digits'],
    ['eth_getBalance', [A, '0x'], 'invalid argument 1: hex string "0x"'],
    ['eth_getBalance', [A, ''], 'invalid argument 1: empty hex string'],
    ['eth_getBalance', [A, '0x1g'], 'invalid argument 1: invalid hex string'],
    ['eth_getBalance', [A, '0x10000000000000000'], 'invalid argument 1: hex number > 64 bits'],
    ['eth_getBalance', [A, '0x8000000000000000'], 'invalid argument 1: blocknumber too high'],
    [
      'eth_getBalance',
      [A, 7],
      'invalid argument 1: json: cannot unmarshal number into Go value of type string',
    ],
    [
      'eth_getBalance',
      [A, { blockNumber: '0x1', blockHash: word(1n) }],
      'invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other',
    ],
    [
      'eth_getBalance',
      [A, { blockHash: '0x12' }],
      'invalid argument 1: hex string has length 2, want 64 for common.Hash',
    ],
    [
      'eth_getBalance',
      [A, { blockHash: 12 }],
      'invalid argument 1: json: cannot unmarshal non-string into Go struct field BlockNumberOrHash.blockHash of type common.Hash',
    ],
    ['eth_getBalance', [A, {}], 'invalid argument 1: invalid arguments; neither block nor hash specified'],
    ['eth_getBalance', [A], 'missing value for required argument 1'],
    ['eth_getBalance', [null, 'latest'], 'missing value for required argument 0'],
    ['eth_getBalance', [A, 'latest', 1], 'too many arguments, want at most 2'],
    ['eth_getBalance', { address: A }, 'non-array args'],
    ['eth_blockNumber', [1], 'too many arguments, want at most 0'],
    [
      'eth_getBlockByNumber',
      ['0x8000000000000000', false],
      'invalid argument 0: block number larger than int64',
    ],
    ['eth_getBlockByNumber', [1, false], 'invalid argument 0: hex string without 0x prefix'],
    [
      'eth_getBlockByNumber',
      ['0x1', 'yes'],
      'invalid argument 1: json: cannot unmarshal string into Go value of type bool',
    ],
    ['eth_getBlockByNumber', ['0x1'], 'missing value for required argument 1'],
    [
      'eth_getTransactionByHash',
      ['0x1234'],
      'invalid argument 0: hex string has length 4, want 64 for common.Hash',
    ],
    [
      'eth_getTransactionByBlockNumberAndIndex',
      ['0x1', '0x00'],
      'invalid argument 1: json: cannot unmarshal hex number with leading zero digits into Go value of type hexutil.Uint',
    ],
    [
      'eth_sendRawTransaction',
      ['0x123'],
      'invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type hexutil.Bytes',
    ],
    [
      'eth_sendRawTransaction',
      ['0xzz'],
      'invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type hexutil.Bytes',
    ],
    [
      'eth_sendRawTransaction',
      [[1]],
      'invalid argument 0: json: cannot unmarshal non-string into Go value of type hexutil.Bytes',
    ],
    [
      'eth_call',
      ['0x'],
      'invalid argument 0: json: cannot unmarshal string into Go value of type ethapi.TransactionArgs',
    ],
    [
      'eth_call',
      [{ to: TOKEN, value: '0x01' }],
      'invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field TransactionArgs.value of type *hexutil.Big',
    ],
    [
      'eth_call',
      [{ to: TOKEN, value: `0x1${'0'.repeat(64)}` }],
      'invalid argument 0: json: cannot unmarshal hex number > 256 bits into Go struct field TransactionArgs.value of type *hexutil.Big',
    ],
    [
      'eth_call',
      [{ to: TOKEN, gas: `0x1${'0'.repeat(16)}` }],
      'invalid argument 0: json: cannot unmarshal hex number > 64 bits into Go struct field TransactionArgs.gas of type hexutil.Uint64',
    ],
    [
      'eth_call',
      [{ to: TOKEN, data: 'abcd' }],
      'invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field TransactionArgs.data of type hexutil.Bytes',
    ],
    [
      'eth_call',
      [{ to: '0x1234' }],
      'invalid argument 0: hex string has length 4, want 40 for common.Address',
    ],
    [
      'eth_call',
      [{ to: TOKEN }, 'latest', null, { time: '0x1' }],
      'invalid argument 3: block overrides are not supported',
    ],
    ['eth_call', [], 'missing value for required argument 0'],
    [
      'eth_getProof',
      [A, 'x', 'latest'],
      'invalid argument 1: json: cannot unmarshal string into Go value of type []string',
    ],
    [
      'eth_getProof',
      [A, [1], 'latest'],
      'invalid argument 1: json: cannot unmarshal number into Go value of type string',
    ],
  ];
  it.each(cases)('%s %j → %s', async (method, params, message) => {
    expect(await failure(method, params)).toEqual({ code: -32602, message });
  });
});

describe('handleRpc: envelope', () => {
  const call = (id: unknown, method: string, params: unknown[] = []) => ({
    jsonrpc: '2.0',
    id,
    method,
    params,
  });

  it('answers unknown methods with geth wording', async () => {
    expect(await failure('eth_mine')).toEqual({
      code: -32601,
      message: 'the method eth_mine does not exist/is not available',
    });
    expect(await failure('constructor')).toMatchObject({ code: -32601 });
    expect(await failure('__proto__')).toMatchObject({ code: -32601 });
  });

  it('answers text that is not JSON with a parse error', async () => {
    const r = await handleRpc('{"jsonrpc": "2.0", "method": ', backend);
    expect(r).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((r as { error: { message: string } }).error.message).toMatch(/^parse error: /);
    expect(await handleRpc(JSON.stringify(call('a', 'eth_chainId')), backend)).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      result: '0x539',
    });
  });

  it('refuses invalid requests, echoing a valid id', async () => {
    const invalid = { code: -32600, message: 'invalid request' };
    expect(await handleRpc({ id: 1, method: 'eth_chainId' }, backend)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: invalid,
    });
    expect(await handleRpc({ jsonrpc: '1.0', id: 2, method: 'eth_chainId' }, backend)).toMatchObject({
      id: 2,
      error: invalid,
    });
    expect(await handleRpc({ jsonrpc: '2.0', id: 3, method: 5 }, backend)).toMatchObject({
      id: 3,
      error: invalid,
    });
    expect(await handleRpc({ jsonrpc: '2.0', id: 3, method: '' }, backend)).toMatchObject({
      id: 3,
      error: invalid,
    });
    expect(await handleRpc({ jsonrpc: '2.0', id: { x: 1 }, method: 'eth_chainId' }, backend)).toMatchObject({
      id: null,
      error: invalid,
    });
    expect(await handleRpc(JSON.stringify('eth_chainId'), backend)).toMatchObject({
      id: null,
      error: invalid,
    });
    expect(await handleRpc({ jsonrpc: '2.0', method: 7 }, backend)).toMatchObject({
      id: null,
      error: invalid,
    });
  });

  it('answers batches in order, leaving notifications out', async () => {
    const r = await handleRpc(
      [
        call(1, 'eth_chainId'),
        { jsonrpc: '2.0', method: 'eth_blockNumber' },
        call('two', 'eth_nope'),
        42,
        call(null, 'eth_getBalance', [ALICE, 'latest']),
      ],
      backend,
    );
    expect(r).toEqual([
      { jsonrpc: '2.0', id: 1, result: '0x539' },
      {
        jsonrpc: '2.0',
        id: 'two',
        error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
      },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } },
      { jsonrpc: '2.0', id: null, result: toQuantity(9n * ETHER) },
    ]);
  });

  it('sends nothing for notifications, even failing ones, but still runs them', async () => {
    const before = backend.seen.length;
    expect(await handleRpc({ jsonrpc: '2.0', method: 'eth_gasPrice' }, backend)).toBeUndefined();
    expect(backend.seen.length).toBe(before + 1);
    expect(
      await handleRpc(
        [
          { jsonrpc: '2.0', method: 'eth_nope' },
          { jsonrpc: '2.0', method: 'eth_getBalance', params: ['0x1'] },
        ],
        backend,
      ),
    ).toBeUndefined();
  });

  it('refuses an empty batch and one over the limit', async () => {
    expect(await handleRpc([], backend)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'empty batch' },
    });
    const batch = [
      { jsonrpc: '2.0', method: 'eth_chainId' },
      call(9, 'eth_chainId'),
      call(10, 'eth_chainId'),
    ];
    expect(await handleRpc(batch, backend, { maxBatchSize: 2 })).toEqual([
      { jsonrpc: '2.0', id: 9, error: { code: -32600, message: 'batch too large' } },
    ]);
    expect(await handleRpc(batch.slice(1), backend, { maxBatchSize: 2 })).toHaveLength(2);
  });

  it('answers an unexpected backend fault as an internal error and logs it', async () => {
    const logged: { msg: string; meta?: Record<string, unknown> }[] = [];
    const log: Logger = {
      info() {},
      warn() {},
      error: (msg, meta) => logged.push(meta === undefined ? { msg } : { msg, meta }),
    };
    const r = await handleRpc(call(5, 'eth_getBalance', [BROKEN, 'latest']), backend, {}, log);
    expect(r).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'internal error' } });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      msg: 'rpc method failed',
      meta: { method: 'eth_getBalance', error: 'disk on fire' },
    });
  });

  it('answers a transaction the backend holds but cannot decode as an internal error', async () => {
    const bad = word(0xbadn);
    backend.txs.set(bad, { raw: Uint8Array.of(0x05, 0xc0), from: fromHex(ALICE) });
    try {
      expect(await failure('eth_getTransactionByHash', [bad])).toEqual({
        code: -32603,
        message: 'internal error',
      });
    } finally {
      backend.txs.delete(bad);
    }
  });
});
