/**
 * Block roots, receipts and blooms against ethereumjs: transactionsRoot vs
 * @ethereumjs/block's genTransactionsTrieRoot and a block's own transaction trie; receipt
 * encoding, blooms and receiptsRoot vs what @ethereumjs/vm produces, both for synthetic receipts
 * and for a block it actually runs (logs, a revert, a creation, every transaction type).
 */
import { createBlock, genTransactionsTrieRoot } from '@ethereumjs/block';
import {
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { Account, Address, createContractAddress, privateToAddress } from '@ethereumjs/util';
import { Bloom, createVM, encodeReceipt as ethEncodeReceipt, runBlock, type TxReceipt } from '@ethereumjs/vm';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_ROOT, toHex } from '@monsoon/dsm-tree';
import {
  BLOOM_BYTES,
  EncodedReceipts,
  ExecutionError,
  ExecutionErrorCode,
  encodeReceipt,
  type Log,
  logsBloom,
  makeCommon,
  orderedTrieRoot,
  type Receipt,
  receiptsRoot,
  transactionsRoot,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import secp256k1 from 'secp256k1';

const CHAIN = 1337n;
const common = makeCommon(CHAIN);

/** Deterministic bytes: keccak256 of (tag, i). */
function det(tag: string, i: number): Uint8Array {
  return keccak.keccak256(new TextEncoder().encode(`${tag}:${i}`));
}

function sign(tx: TypedTransaction, key: Uint8Array): TypedTransaction {
  const { signature, recid } = secp256k1.ecdsaSign(tx.getHashedMessageToSign(), key);
  return tx.addSignature(BigInt(recid), signature.slice(0, 32), signature.slice(32), true);
}

/** `n` signed transactions cycling through legacy, EIP-2930 and EIP-1559. */
function signedTxs(n: number): TypedTransaction[] {
  const out: TypedTransaction[] = [];
  for (let i = 0; i < n; i++) {
    const base = {
      nonce: BigInt(i),
      gasLimit: 21_000n + BigInt(i),
      to: det('to', i).slice(0, 20),
      data: det('d', i).slice(0, i % 40),
    };
    const unsigned =
      i % 3 === 0
        ? createLegacyTx({ ...base, gasPrice: 10n }, { common })
        : i % 3 === 1
          ? createAccessList2930Tx({ ...base, gasPrice: 10n }, { common })
          : createFeeMarket1559Tx({ ...base, maxFeePerGas: 10n }, { common });
    out.push(sign(unsigned, det('key', i)));
  }
  return out;
}

const hex = (b: Uint8Array): string => toHex(b);

describe('transactionsRoot', () => {
  it.each([0, 1, 2, 3, 16, 127, 128, 129, 130, 200])(
    '%i transactions: equals genTransactionsTrieRoot and the block transaction trie',
    async (n) => {
      const txs = signedTxs(n);
      const ours = transactionsRoot(txs.map((t) => t.serialize()));
      expect(hex(ours)).toBe(hex(await genTransactionsTrieRoot(txs)));
      if (n === 0 || n === 130) {
        const block = createBlock(
          { header: { number: 1n, baseFeePerGas: 1n }, transactions: txs },
          { common },
        );
        expect(hex(ours)).toBe(hex(await block.genTxTrie()));
      }
    },
  );

  it('the empty list gives the empty trie root; an empty transaction is refused', () => {
    expect(hex(transactionsRoot([]))).toBe(hex(EMPTY_ROOT));
    expect(hex(orderedTrieRoot([]))).toBe('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
    let e: unknown;
    try {
      transactionsRoot([signedTxs(1)[0]!.serialize(), new Uint8Array(0)]);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(ExecutionError);
    expect((e as ExecutionError).code).toBe(ExecutionErrorCode.BadTransaction);
    expect((e as ExecutionError).message).toMatch(/transaction 1 is empty/);
  });

  it('depends on the order', () => {
    const raws = signedTxs(3).map((t) => t.serialize());
    expect(hex(transactionsRoot(raws))).not.toBe(hex(transactionsRoot([raws[1]!, raws[0]!, raws[2]!])));
  });
});

/** Our receipt in ethereumjs' shape. */
function toEth(r: Receipt): TxReceipt {
  return {
    status: r.status,
    cumulativeBlockGasUsed: r.cumulativeGasUsed,
    bitvector: logsBloom(r.logs),
    logs: r.logs.map((l) => [l.address, [...l.topics], l.data]),
  };
}

/** ethereumjs' bloom of `logs`. */
function ethBloom(logs: readonly Log[]): Uint8Array {
  const b = new Bloom();
  for (const l of logs) {
    b.add(l.address);
    for (const t of l.topics) b.add(t);
  }
  return b.bitvector;
}

describe('receipts and blooms (synthetic)', () => {
  it('200 seeded receipts: encoding and bloom equal ethereumjs encodeReceipt and Bloom', () => {
    for (let i = 0; i < 200; i++) {
      const seed = det('receipt', i);
      const logs: Log[] = [];
      for (let j = 0; j < seed[0]! % 6; j++) {
        const topics = Array.from({ length: seed[j + 1]! % 5 }, (_, k) => det(`topic${j}`, i * 10 + k));
        logs.push({
          address: det('addr', i * 10 + j).slice(0, 20),
          topics,
          data: det('data', i).slice(0, seed[j + 7]! % 33),
        });
      }
      const r: Receipt = {
        type: i % 3,
        status: (seed[2]! & 1) as 0 | 1,
        cumulativeGasUsed: 21_000n + BigInt(i) * 1_000_003n,
        logs,
      };
      expect(hex(logsBloom(logs))).toBe(hex(ethBloom(logs)));
      expect(hex(encodeReceipt(r))).toBe(hex(ethEncodeReceipt(toEth(r), r.type as 0 | 1 | 2)));
    }
  });

  it('a receipt with no logs has an all-zero bloom; status 0 is the empty string; typed ones start with the type', () => {
    expect(logsBloom([])).toEqual(new Uint8Array(BLOOM_BYTES));
    const r: Receipt = { type: 0, status: 0, cumulativeGasUsed: 21_000n, logs: [] };
    const legacy = encodeReceipt(r);
    // rlp(["", 0x5208, bloom, []]): payload 1 + 3 + 259 + 1 = 264 = 0x108 bytes.
    expect(hex(legacy)).toBe(`f90108${'80'}${'825208'}b90100${'00'.repeat(256)}c0`);
    expect(encodeReceipt({ ...r, type: 2 })).toEqual(Uint8Array.of(2, ...legacy));
    expect(() => encodeReceipt(r, new Uint8Array(255))).toThrow(RangeError);
    expect(() => encodeReceipt({ ...r, type: 0x80 })).toThrow(RangeError);
  });

  it('receipts with logs (written in one pass) equal ethereumjs at every RLP header size', () => {
    // Data of 0–1 bytes (a single byte under 0x80 is its own encoding), 55/56 (short and long
    // string headers), 300 (two length bytes); a log list of 1, 2 and 600 logs (a payload over
    // 64 KiB: three length bytes); topics of 0–4 and one odd-sized topic.
    const sizes = [0, 1, 1, 2, 55, 56, 300];
    for (const [i, size] of sizes.entries()) {
      for (const count of [1, 2, 600]) {
        const logs: Log[] = Array.from({ length: count }, (_, j) => {
          const data = Uint8Array.from({ length: size }, (_, b) => (j * 31 + b * 7 + 1) & 0xff);
          if (size === 1) data[0] = i === 1 ? 0x7f : 0x80;
          const topics = Array.from({ length: j % 5 }, (_, k) => det('topic', i * 1000 + j * 5 + k));
          if (j === 1) topics.push(det('odd', i).slice(0, 3));
          return { address: det('addr', j).slice(0, 20), topics, data };
        });
        for (const type of [0, 2]) {
          const r: Receipt = {
            type,
            status: (count & 1) as 0 | 1,
            cumulativeGasUsed: 1n << BigInt(8 * i),
            logs,
          };
          expect(hex(encodeReceipt(r))).toBe(hex(ethEncodeReceipt(toEth(r), type as 0 | 2)));
        }
      }
    }
  });

  it('receipts without logs (encoded in one pass) equal ethereumjs for every gas size, status and type', () => {
    for (const cumulativeGasUsed of [0n, 1n, 127n, 128n, 255n, 256n, 21_000n, 1n << 40n, (1n << 64n) - 1n]) {
      for (const type of [0, 1, 2]) {
        for (const status of [0, 1] as const) {
          const r: Receipt = { type, status, cumulativeGasUsed, logs: [] };
          // (ethereumjs writes a zero total as 0x00, not RLP's 0x80; a real receipt is never 0.)
          if (cumulativeGasUsed > 0n) {
            expect(hex(encodeReceipt(r))).toBe(hex(ethEncodeReceipt(toEth(r), type as 0 | 1 | 2)));
          }
          expect(encodeReceipt(r)).toEqual(encodeReceipt(r, new Uint8Array(BLOOM_BYTES)));
        }
      }
    }
  });

  it("EncodedReceipts gives encodeReceipt's bytes for every receipt, in order, across its chunks", () => {
    // ~300 B without logs, ~600 B with three, and one of ~190 KB (over a chunk: its own) in the
    // middle, so receipts fill chunks, start new ones, and the ones after the large one follow it.
    const receipts: Receipt[] = [];
    for (let i = 0; i < 700; i++) {
      const count = i === 350 ? 600 : i % 3 === 0 ? 3 : 0;
      const logs: Log[] = Array.from({ length: count }, (_, j) => ({
        address: det('addr', i * 7 + j).slice(0, 20),
        topics: Array.from({ length: (i + j) % 4 }, (_, k) => det('topic', i * 31 + j * 5 + k)),
        data: det('data', i + j).slice(0, count === 600 ? 32 : (i * 13 + j) % 33),
      }));
      const r: Receipt = {
        type: i % 3,
        status: (i & 1) as 0 | 1,
        cumulativeGasUsed: 21_000n * BigInt(i + 1),
        logs,
      };
      receipts.push(i % 5 === 1 && count > 0 ? { ...r, bloom: logsBloom(logs) } : r);
    }
    const encoded = new EncodedReceipts();
    for (const r of receipts) encoded.add(r);
    expect(encoded.length).toBe(receipts.length);
    const all = encoded.all();
    expect(all.length).toBe(receipts.length);
    for (const [i, r] of receipts.entries()) expect(hex(all[i]!)).toBe(hex(encodeReceipt(r)));
    expect(new Set(all.map((e) => e.buffer)).size).toBeGreaterThan(2);
    expect(new EncodedReceipts().all()).toEqual([]);
  });

  it('receiptsRoot equals an ethereumjs-style ordered trie of ethereumjs encodings', async () => {
    const receipts: Receipt[] = Array.from({ length: 140 }, (_, i) => ({
      type: i % 3,
      status: (i % 4 === 0 ? 0 : 1) as 0 | 1,
      cumulativeGasUsed: 21_000n * BigInt(i + 1),
      logs:
        i % 5 === 0 ? [] : [{ address: det('a', i).slice(0, 20), topics: [det('t', i)], data: det('x', i) }],
    }));
    const theirs = orderedTrieRoot(receipts.map((r) => ethEncodeReceipt(toEth(r), r.type as 0 | 1 | 2)));
    expect(hex(receiptsRoot(receipts))).toBe(hex(theirs));
    expect(hex(receiptsRoot([]))).toBe(hex(EMPTY_ROOT));
  });
});

describe('receipts of a block run by @ethereumjs/vm', () => {
  it('encodings, blooms, receiptsRoot and the block bloom equal runBlock’s', async () => {
    const vm = await createVM({ common });
    const keys = [1, 2, 3].map((i) => det('funded', i));
    for (const k of keys) {
      await vm.stateManager.putAccount(new Address(privateToAddress(k)), new Account(0n, 10n ** 20n));
    }
    // Logger: LOG2(mem[0..32] = 42, topics aa, bb); LOG1(empty, topic 07); STOP.
    const logger = Uint8Array.from(Buffer.from('602a60005260bb60aa60206000a2600760006000a100', 'hex'));
    // Reverter: REVERT(0, 0).
    const reverter = Uint8Array.from(Buffer.from('60006000fd', 'hex'));
    const loggerAddr = new Address(det('logger', 0).slice(0, 20));
    const reverterAddr = new Address(det('reverter', 0).slice(0, 20));
    await vm.stateManager.putAccount(loggerAddr, new Account());
    await vm.stateManager.putCode(loggerAddr, logger);
    await vm.stateManager.putAccount(reverterAddr, new Account());
    await vm.stateManager.putCode(reverterAddr, reverter);

    const fee = { maxFeePerGas: 100n, maxPriorityFeePerGas: 1n };
    const txs = [
      sign(
        createLegacyTx({ nonce: 0n, gasPrice: 100n, gasLimit: 100_000n, to: loggerAddr }, { common }),
        keys[0]!,
      ),
      sign(
        createAccessList2930Tx(
          {
            nonce: 0n,
            gasPrice: 100n,
            gasLimit: 100_000n,
            to: loggerAddr,
            accessList: [{ address: loggerAddr.toString(), storageKeys: [`0x${'00'.repeat(32)}`] }],
          },
          { common },
        ),
        keys[1]!,
      ),
      sign(
        createFeeMarket1559Tx({ nonce: 0n, ...fee, gasLimit: 100_000n, to: reverterAddr }, { common }),
        keys[2]!,
      ),
      sign(
        createFeeMarket1559Tx(
          { nonce: 1n, ...fee, gasLimit: 21_000n, to: det('eoa', 0).slice(0, 20), value: 5n },
          { common },
        ),
        keys[2]!,
      ),
      // A creation whose init code is the logger: it logs from the new contract's address.
      sign(
        createFeeMarket1559Tx({ nonce: 1n, ...fee, gasLimit: 200_000n, data: logger }, { common }),
        keys[0]!,
      ),
    ];
    const block = createBlock(
      { header: { number: 1n, gasLimit: 30_000_000n, baseFeePerGas: 7n, timestamp: 1n }, transactions: txs },
      { common },
    );
    const result = await runBlock(vm, {
      block,
      generate: true,
      skipBlockValidation: true,
      skipHeaderValidation: true,
    });
    expect(result.receipts).toHaveLength(txs.length);

    const ours: Receipt[] = result.receipts.map((r, i) => ({
      type: txs[i]!.type,
      status: (r as { status: 0 | 1 }).status,
      cumulativeGasUsed: r.cumulativeBlockGasUsed,
      logs: r.logs.map(([address, topics, data]) => ({ address, topics, data })),
    }));
    // The block does what it was built to: logs, a revert, a creation that logs.
    expect(ours.map((r) => r.status)).toEqual([1, 1, 0, 1, 1]);
    expect(ours.map((r) => r.logs.length)).toEqual([2, 2, 0, 0, 2]);
    expect(ours[4]!.logs[0]!.address).toEqual(
      createContractAddress(new Address(privateToAddress(keys[0]!)), 1n).bytes,
    );
    expect(ours[0]!.logs[0]!.topics).toEqual([
      det('x', 0).fill(0).fill(0xaa, 31),
      det('x', 0).fill(0).fill(0xbb, 31),
    ]);

    for (let i = 0; i < ours.length; i++) {
      expect(hex(logsBloom(ours[i]!.logs))).toBe(hex(result.receipts[i]!.bitvector));
      expect(hex(encodeReceipt(ours[i]!))).toBe(hex(ethEncodeReceipt(result.receipts[i]!, txs[i]!.type)));
    }
    expect(hex(receiptsRoot(ours))).toBe(hex(result.receiptsRoot));
    expect(hex(logsBloom(ours.flatMap((r) => r.logs)))).toBe(hex(result.logsBloom));
    expect(hex(transactionsRoot(txs.map((t) => t.serialize())))).toBe(hex(await block.genTxTrie()));
  });
});
