/**
 * The client's chain: blocks verified against their headers' roots; a replay of blocks already
 * held leaves the head where it is; a different block at a held height replaces it and all
 * above (their transactions leave the index); a gap is refused; inclusion waiters fire.
 */
import { describe, expect, it } from '@jest/globals';
import {
  CHAIN_TX_CAP_FLOOR,
  ChainView,
  type ClientBlock,
  clientBlockOf,
  decodeReceipt,
  isClientError,
} from '@monsoon/client';
import { encodeReceipt, receiptsRoot, transactionsRoot } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { type BlockHeader, encodeHeader } from '@monsoon/protocol';
import { byteKey, rlpEncode } from '@monsoon/util';

/** A block on `parent` (a parent hash of zeros when none is given), told apart by `tag`. */
function block(
  number: bigint,
  tag: number,
  txs: Uint8Array[] = [],
  parent?: ClientBlock,
  difficulty = 0n,
): ClientBlock {
  return {
    hash: keccak.keccak256(Uint8Array.of(Number(number), tag)),
    header: {
      parentHash: parent?.hash ?? new Uint8Array(32),
      number,
      difficulty,
      nonce: new Uint8Array(8),
    } as BlockHeader,
    transactions: txs,
    txHashes: txs.map((t) => keccak.keccak256(t)),
    txKeys: txs.map((t) => byteKey(keccak.keccak256(t))),
    receipts: [],
    logsBloom: new Uint8Array(256),
    size: 0,
  };
}

describe('ChainView', () => {
  it('replays leave the head alone; a fork replaces from its height; gaps are refused', async () => {
    const chain = new ChainView();
    const tx = Uint8Array.of(1, 2, 3);
    const b = [block(0n, 0)];
    b.push(block(1n, 0, [], b[0]));
    b.push(block(2n, 0, [tx], b[1]));
    b.push(block(3n, 0, [], b[2]));
    for (const x of b) chain.add(x);
    expect(chain.head).toBe(b[3]);
    for (const x of b.slice(1)) {
      chain.add(x);
      expect(chain.head).toBe(b[3]);
    }
    expect(chain.transaction(keccak.keccak256(tx))?.block).toBe(b[2]);

    const fork = block(2n, 9, [], b[1]);
    chain.add(fork);
    expect(chain.head).toBe(fork);
    expect(chain.byNumber(3n)).toBeUndefined();
    expect(chain.transaction(keccak.keccak256(tx))).toBeUndefined();

    const waiting = chain.included(keccak.keccak256(tx));
    const again = block(3n, 9, [tx], fork);
    chain.add(again);
    expect((await waiting).block).toBe(again);
    expect(chain.waiting).toBe(0);

    // A transaction that never lands: its waiter goes with its signal.
    const never = keccak.keccak256(Uint8Array.of(9, 9, 9));
    const stop = new AbortController();
    const gone = chain.included(never, stop.signal);
    const kept = chain.included(never);
    expect(chain.waiting).toBe(1);
    stop.abort(new Error('gave up'));
    await expect(gone).rejects.toThrow('gave up');
    expect(chain.waiting).toBe(1);
    const other = new AbortController();
    const alone = chain.included(keccak.keccak256(Uint8Array.of(4)), other.signal);
    other.abort(new Error('gave up too'));
    await expect(alone).rejects.toThrow('gave up too');
    expect(chain.waiting).toBe(1);
    void kept;

    let caught: unknown;
    try {
      chain.add(block(9n, 0));
    } catch (e) {
      caught = e;
    }
    expect(isClientError(caught)).toBe(true);
    expect(chain.head).toBe(again);
  });

  it('finds every held transaction by hash where block numbers wrap the index low bits, and none it let go', () => {
    // Window 8: the index keeps small integers (block number's low 15 bits and the index), the
    // blocks held straddling 32,768; 40,000: a window wider than those bits, location objects.
    for (const window of [8, 40_000]) {
      const chain = new ChainView({ window, maxTransactions: 1_000_000 });
      const start = 32_755n;
      const txOf = (k: number, i: number) => Uint8Array.of(9, k, i);
      const b: ClientBlock[] = [];
      for (let k = 0; k < 20; k++) {
        b.push(
          block(
            start + BigInt(k),
            1,
            [0, 1, 2].map((i) => txOf(k, i)),
            b[k - 1],
          ),
        );
        chain.add(b[k]!);
      }
      const held = Math.min(window, 20);
      for (let k = 0; k < 20; k++)
        for (let i = 0; i < 3; i++) {
          const loc = chain.transaction(keccak.keccak256(txOf(k, i)));
          if (k >= 20 - held) {
            expect(loc?.block).toBe(b[k]);
            expect(loc?.index).toBe(i);
          } else expect(loc).toBeUndefined();
        }
      // A fork replacing the last two blocks: their transactions leave the index, its own are found.
      const fork = block(start + 18n, 2, [Uint8Array.of(8, 1), Uint8Array.of(8, 2)], b[17]);
      chain.add(fork);
      expect(chain.transaction(keccak.keccak256(txOf(18, 0)))).toBeUndefined();
      expect(chain.transaction(keccak.keccak256(txOf(19, 2)))).toBeUndefined();
      expect(chain.transaction(keccak.keccak256(Uint8Array.of(8, 2)))).toEqual({ block: fork, index: 1 });
      expect(chain.transaction(keccak.keccak256(txOf(17, 2)))).toEqual({ block: b[17], index: 2 });
    }
  });

  it('keeps a window of blocks: older ones and their transactions are forgotten, genesis stays', () => {
    const chain = new ChainView({ window: 3 });
    const txs = Array.from({ length: 8 }, (_, i) => Uint8Array.of(7, i));
    const b: ClientBlock[] = [];
    txs.forEach((tx, i) => {
      b.push(block(BigInt(i), 0, i === 0 ? [] : [tx], b[i - 1]));
    });
    for (const x of b) chain.add(x);
    expect(chain.size).toBe(4); // blocks 5, 6, 7 and genesis
    expect(chain.byNumber(0n)).toBe(b[0]);
    for (let n = 1; n <= 4; n++) {
      expect(chain.byNumber(BigInt(n))).toBeUndefined();
      expect(chain.block(b[n]!.hash)).toBeUndefined();
      expect(chain.transaction(keccak.keccak256(txs[n]!))).toBeUndefined();
    }
    for (let n = 5; n <= 7; n++) {
      expect(chain.byNumber(BigInt(n))).toBe(b[n]);
      expect(chain.transaction(keccak.keccak256(txs[n]!))?.block).toBe(b[n]);
    }
    // A replay of a forgotten block is of no use and changes nothing.
    chain.add(b[2]!);
    expect(chain.head).toBe(b[7]);
    expect(chain.size).toBe(4);
  });

  it('holds at most maxTransactions however full the blocks, down to CHAIN_TX_CAP_FLOOR blocks', () => {
    // Full blocks: the block window alone would hold 512 × 50 transactions.
    const chain = new ChainView({ maxTransactions: 1_000 });
    let parent: ClientBlock | undefined;
    for (let n = 0; n < 400; n++) {
      const txs = n === 0 ? [] : Array.from({ length: 50 }, (_, i) => Uint8Array.of(n >> 8, n & 255, i));
      parent = block(BigInt(n), 0, txs, parent);
      chain.add(parent);
      expect(chain.transactionCount).toBeLessThanOrEqual(Math.max(1_000, CHAIN_TX_CAP_FLOOR * 50));
    }
    // 64 blocks of 50 (the floor binds over the cap), genesis aside.
    expect(chain.transactionCount).toBe(CHAIN_TX_CAP_FLOOR * 50);
    expect(chain.size).toBe(CHAIN_TX_CAP_FLOOR + 1);
    expect(chain.byNumber(0n)).toBeDefined();
    expect(chain.byNumber(399n - BigInt(CHAIN_TX_CAP_FLOOR))).toBeUndefined();
    expect(chain.byNumber(400n - BigInt(CHAIN_TX_CAP_FLOOR))).toBeDefined();

    // Sparse blocks (one transaction a block on average): the cap binds above the floor.
    const sparse = new ChainView({ maxTransactions: 300 });
    parent = undefined;
    for (let n = 0; n < 1_000; n++) {
      const txs = n === 0 ? [] : Array.from({ length: n % 3 }, (_, i) => Uint8Array.of(n >> 8, n & 255, i));
      parent = block(BigInt(n), 0, txs, parent);
      sparse.add(parent);
      expect(sparse.transactionCount).toBeLessThanOrEqual(300);
    }
    expect(sparse.transactionCount).toBeGreaterThan(297);
    expect(sparse.size).toBeGreaterThan(290);
    expect(sparse.size).toBeLessThan(310);
    // Empty blocks: the block window binds.
    const empty = new ChainView({ window: 100, maxTransactions: 300 });
    parent = undefined;
    for (let n = 0; n < 1_000; n++) {
      parent = block(BigInt(n), 0, [], parent);
      empty.add(parent);
    }
    expect(empty.size).toBe(101);
  });

  it('refuses a block whose parent is not the block held below it, or below the difficulty rule', () => {
    const chain = new ChainView({ minDifficulty: 5n });
    const g = block(0n, 0);
    chain.add(g);
    const one = block(1n, 0, [], g, 5n);
    chain.add(one);
    const stranger = block(2n, 0, [], block(1n, 7, [], g, 5n), 5n);
    expect(() => chain.add(stranger)).toThrow(/its parent is [0-9a-f]{64}, the block held below it is/);
    expect(() => chain.add(block(2n, 1, [], one, 4n))).toThrow(/difficulty 4 is below the chain's minimum 5/);
    expect(chain.head).toBe(one);
    const two = block(2n, 2, [], one, 5n);
    chain.add(two);
    expect(chain.head).toBe(two);
    // A reorg still links: a new block 2 on block 1 replaces the old one.
    const other = block(2n, 3, [], one, 6n);
    chain.add(other);
    expect(chain.head).toBe(other);
  });

  it('adds history below the oldest block held: linked and consecutive, newest first while there is room', async () => {
    // The chain #0..#9, of which a late client holds #6..#9 (its anchor #6).
    const all: ClientBlock[] = [];
    for (let n = 0n; n < 10n; n++) all.push(block(n, 0, [Uint8Array.of(Number(n), 1)], all.at(-1), 3n));
    const view = () => {
      const chain = new ChainView({ window: 8, minDifficulty: 2n });
      for (const b of all.slice(6)) chain.add(b);
      return chain;
    };
    // A waiter for a history transaction is answered when its block arrives.
    const chain = view();
    const early = chain.included(all[2]!.txHashes[0]!);
    // The window (8) leaves room for 4 of #0..#5: the newest, #2..#5; what the view holds is skipped.
    expect(chain.addHistory(all.slice(0, 8))).toBe(4);
    expect(chain.oldest).toBe(all[2]);
    expect(chain.head).toBe(all[9]);
    expect(chain.byNumber(3n)).toBe(all[3]);
    expect(chain.byNumber(1n)).toBeUndefined();
    expect(chain.block(all[4]!.hash)).toBe(all[4]);
    expect((await early).block).toBe(all[2]);
    expect(chain.transactionCount).toBe(8);
    // Transactions bind too: room for 6 leaves 2 of history.
    const tight = new ChainView({ maxTransactions: 6 });
    for (const b of all.slice(6)) tight.add(b);
    expect(tight.addHistory(all.slice(0, 6))).toBe(2);
    expect(tight.oldest).toBe(all[4]);
    // All of it, genesis included, where the window allows; new heads then push it out as usual.
    const roomy = new ChainView();
    for (const b of all.slice(6)) roomy.add(b);
    expect(roomy.addHistory(all.slice(0, 6))).toBe(6);
    expect(roomy.byNumber(0n)).toBe(all[0]);
    expect(roomy.size).toBe(10);

    // Refused whole, nothing added: a gap, a block not the parent of the one above, a foreign
    // chain's top, a difficulty below the rule.
    for (const [history, why] of [
      [[all[3]!, all[4]!], /expected #5 below #6/],
      [[all[3]!, all[5]!], /expected #4 below #5/],
      [[all[4]!, block(5n, 7, [], all[4], 3n)], /block #6 names [0-9a-f]{64} as its parent/],
      [[block(4n, 8, [], all[3], 3n), all[5]!], /block #5 names/],
    ] as const) {
      const c = view();
      expect(() => c.addHistory(history)).toThrow(why);
      expect(c.oldest).toBe(all[6]);
      expect(c.size).toBe(4);
    }
    const easy: ClientBlock[] = [block(4n, 1, [], all[3], 1n)];
    easy.push(block(5n, 1, [], easy[0], 3n));
    const linked = { ...all[6]!, header: { ...all[6]!.header, parentHash: easy[1]!.hash } };
    const c = new ChainView({ minDifficulty: 2n });
    c.add(linked);
    expect(() => c.addHistory(easy)).toThrow(
      /history block #4 [0-9a-f]{64}: difficulty 1 is below the chain's minimum 2/,
    );
    expect(c.size).toBe(1);
    expect(() => new ChainView().addHistory(all.slice(0, 2))).toThrow(/history before any block/);
  });

  it("checks a streamed block's transactions and receipts against its header", () => {
    const receipts = [
      { type: 2, status: 1 as const, cumulativeGasUsed: 21_000n, logs: [] },
      {
        type: 0,
        status: 0 as const,
        cumulativeGasUsed: 50_000n,
        logs: [
          {
            address: new Uint8Array(20).fill(1),
            topics: [new Uint8Array(32).fill(2)],
            data: Uint8Array.of(5),
          },
        ],
      },
    ];
    const txs = [Uint8Array.of(0x02, 0xc0), Uint8Array.of(0xc1, 0x80)];
    const header: BlockHeader = {
      parentHash: new Uint8Array(32),
      miner: new Uint8Array(20),
      stateRoot: new Uint8Array(32),
      transactionsRoot: transactionsRoot(txs),
      receiptsRoot: receiptsRoot(receipts),
      difficulty: 0n,
      number: 1n,
      gasLimit: 30_000_000n,
      gasUsed: 50_000n,
      timestamp: 1n,
      extraData: new Uint8Array(0),
      nonce: new Uint8Array(8),
    };
    const encoded = receipts.map((r) => encodeReceipt(r));
    expect(encoded.map(decodeReceipt)).toEqual(receipts);
    const ok = clientBlockOf({ headerRlp: encodeHeader(header), transactions: txs, receipts: encoded });
    expect(ok.receipts[1]!.logs[0]!.data).toEqual(Uint8Array.of(5));
    expect(() =>
      clientBlockOf({ headerRlp: encodeHeader(header), transactions: [txs[1]!, txs[0]!], receipts: encoded }),
    ).toThrow(/transactions root/);
    // A difficulty its nonce does not meet (a work-free header claiming 2^40).
    expect(() =>
      clientBlockOf({
        headerRlp: encodeHeader({ ...header, difficulty: 1n << 40n }),
        transactions: txs,
        receipts: encoded,
      }),
    ).toThrow(/proof of work does not meet its difficulty 1099511627776/);
    expect(() =>
      clientBlockOf({
        headerRlp: encodeHeader(header),
        transactions: txs,
        receipts: [encoded[1]!, encoded[0]!],
      }),
    ).toThrow(/receipts root/);
  });

  it('decodes receipts of every shape back to their fields, and refuses malformed ones', () => {
    const word = (b: number) => new Uint8Array(32).fill(b);
    const receipts = [
      // A gas total past 48 bits (read in chunks), a log with no topics and no data, one with four.
      { type: 2, status: 1 as const, cumulativeGasUsed: (1n << 70n) + 5n, logs: [] },
      {
        type: 0,
        status: 1 as const,
        cumulativeGasUsed: 0n,
        logs: [
          { address: new Uint8Array(20).fill(9), topics: [], data: new Uint8Array(0) },
          {
            address: new Uint8Array(20).fill(8),
            topics: [word(1), word(2), word(3), word(4)],
            data: word(5),
          },
        ],
      },
      { type: 1, status: 0 as const, cumulativeGasUsed: 21_000n, logs: [] },
    ];
    for (const r of receipts) expect(decodeReceipt(encodeReceipt(r))).toEqual(r);
    const bloom = new Uint8Array(256);
    // Each refused with the message that names what is wrong.
    const bad: [RegExp, Uint8Array][] = [
      [/expected a list of 4/, rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom])],
      [/expected a list of 4/, rlpEncode(Uint8Array.of(1, 2, 3))],
      [/bloom: expected 256 bytes/, rlpEncode([Uint8Array.of(1), Uint8Array.of(1), new Uint8Array(255), []])],
      [/logs: expected a list/, rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, Uint8Array.of(1)])],
      [/status: expected bytes/, rlpEncode([[], Uint8Array.of(1), bloom, []])],
      [
        /log: expected \[address, topics, data\]/,
        rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, [[word(1), []]]]),
      ],
      [
        /log: expected \[address, topics, data\]/,
        rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, [word(1)]]),
      ],
      [
        /log: expected \[address, topics, data\]/,
        rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, [[word(1), word(2), []]]]),
      ],
      [
        /log topic: expected bytes/,
        rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, [[word(1), [[]], word(2)]]]),
      ],
      [
        /log data: expected bytes/,
        rlpEncode([Uint8Array.of(1), Uint8Array.of(1), bloom, [[word(1), [], []]]]),
      ],
    ];
    for (const [why, b] of bad) expect(() => decodeReceipt(b)).toThrow(why);
    // Trailing bytes after the receipt's list.
    expect(() => decodeReceipt(new Uint8Array([...encodeReceipt(receipts[2]!), 0x80]))).toThrow();
  });

  it('keeps nothing of the streamed message: its transactions, hashes and logs are in one buffer of its own', () => {
    const receipt = {
      type: 2,
      status: 1 as const,
      cumulativeGasUsed: 40_000n,
      logs: [
        { address: new Uint8Array(20).fill(1), topics: [new Uint8Array(32).fill(2)], data: Uint8Array.of(5) },
      ],
    };
    const txs = [Uint8Array.of(0x02, 0xc0), Uint8Array.of(0xc1, 0x80)];
    const receipts = [encodeReceipt({ ...receipt, logs: [] }), encodeReceipt(receipt)];
    // As a stream decodes them: views into one message.
    const message = new Uint8Array(1024);
    let at = 0;
    const view = (b: Uint8Array) => {
      message.set(b, at);
      at += b.length;
      return message.subarray(at - b.length, at);
    };
    const header: BlockHeader = {
      parentHash: new Uint8Array(32),
      miner: new Uint8Array(20),
      stateRoot: new Uint8Array(32),
      transactionsRoot: transactionsRoot(txs),
      receiptsRoot: receiptsRoot([{ ...receipt, logs: [] }, receipt]),
      difficulty: 0n,
      number: 1n,
      gasLimit: 30_000_000n,
      gasUsed: 40_000n,
      timestamp: 1n,
      extraData: new Uint8Array(0),
      nonce: new Uint8Array(8),
    };
    const b = clientBlockOf({
      headerRlp: encodeHeader(header),
      transactions: txs.map(view),
      receipts: receipts.map(view),
    });
    const log = b.receipts[1]!.logs[0]!;
    const kept = [...b.transactions, ...b.txHashes, log.address, ...log.topics, log.data];
    expect(kept.every((x) => x.buffer !== message.buffer)).toBe(true);
    expect(new Set(kept.map((x) => x.buffer)).size).toBe(1);
    expect(kept[0]!.buffer.byteLength).toBe(2 + 2 + 2 * 32 + 20 + 32 + 1);
    expect(b.transactions).toEqual(txs);
    expect(b.txHashes).toEqual(txs.map((t) => keccak.keccak256(t)));
    // The keys the index and the pool look transactions up by: each its own hash's.
    expect(b.txKeys).toEqual(txs.map((t) => byteKey(keccak.keccak256(t))));
    const chain = new ChainView();
    chain.add(b);
    expect(txs.map((t) => chain.transaction(keccak.keccak256(t)))).toEqual(
      txs.map((_, index) => ({ block: b, index })),
    );
    expect(log).toEqual(receipt.logs[0]);
  });
});
