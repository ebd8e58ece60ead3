/**
 * revm against @ethereumjs/evm over random contract calls: contracts whose code is drawn from
 * an opcode grammar (arithmetic, memory, storage and transient storage, logs, environment
 * reads, nested CALL / STATICCALL / DELEGATECALL / CALLCODE into each other and into
 * precompiles, CREATE / CREATE2 of children that return, revert or self-destruct,
 * SELFDESTRUCT, REVERT, bad jumps, invalid opcodes), called with random calldata, value, low
 * gas limits and access lists, at every fork. Both engines must give the same outcome per
 * transaction (included or refused with the same code; status, gas, logs, created address),
 * the same state root, and updates that replay to it. Seeded: a failure names its seed.
 *
 * The same blocks again over a partial state, as a miner holds it (a tree known by its root and
 * a bag proving every account and code but a quarter of the slots left out): transactions that
 * share accounts and slots, some aborting MISSING_NODE mid-block on a slot the bag lacks. Both
 * engines must abort the same transactions on the same key, and the ones before and after
 * must end the same (the aborted ones leave nothing).
 *
 * And revm's batches against revm one call per transaction, over the same blocks on the whole
 * and the partial state: the block cut into batches of random sizes (executeBatch), the same
 * outcomes, state root and logical updates, with most transactions run inside batches (the
 * rest, refused, aborted, deleting, left to a call of their own mid-batch).
 */
import {
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  BlockExecutor,
  type ChainRules,
  defaultChainRules,
  type EngineName,
  type Fork,
  forkAtLeast,
  makeCommon,
  revmAvailable,
  type TxOutcome,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { applyAccountUpdate } from '@monsoon/protocol';
import { Prng } from '@monsoon/test-utils';
import { skipRevmWhereUnbuilt } from './engines.js';

const CONTRACTS = 8;
const EOAS = 6;
const TXS = 48;
const SEEDS = [1, 2, 3, 4, 5, 6];
const FORKS: readonly Fork[] = ['shanghai', 'cancun', 'prague', 'osaka'];

const contractAt = (i: number): Uint8Array => {
  const a = new Uint8Array(20);
  a[0] = 0xc0;
  a[19] = i + 1;
  return a;
};
/** Slot `i` as a 32-byte word. */
const slotWord = (i: number): Uint8Array => {
  const w = new Uint8Array(32);
  w[31] = i;
  return w;
};
const KEYS = Array.from({ length: EOAS }, (_, i) => keccak.keccak256(Uint8Array.of(0xf7, i)));
const EOA = KEYS.map((k) => privateToAddress(k));

/** Builds random bytecode whose snippets each leave the stack as they found it. */
class CodeGen {
  private readonly out: number[] = [];

  constructor(
    private readonly r: Prng,
    private readonly fork: Fork,
  ) {}

  private push(v: Uint8Array | number): void {
    const b = typeof v === 'number' ? Uint8Array.of(v & 0xff) : v;
    this.out.push(0x5f + b.length, ...b);
  }

  /** A value worth pushing: small, a word, an address here, or calldata. */
  private value(): void {
    const r = this.r;
    const k = r.int(6);
    if (k === 0) this.push(r.int(256));
    else if (k === 1) this.push(r.bytes(1 + r.int(32)));
    else if (k === 2) this.push(contractAt(r.int(CONTRACTS)));
    else if (k === 3) this.push(EOA[r.int(EOAS)]!);
    else if (k === 4) {
      this.push(r.int(4) * 32);
      this.out.push(0x35); // CALLDATALOAD
    } else this.out.push([0x33, 0x34, 0x30, 0x32, 0x47, 0x36][r.int(6)]!); // CALLER CALLVALUE ADDRESS ORIGIN SELFBALANCE CALLDATASIZE
  }

  /** A call-like op to a contract, a precompile or an EOA, its success flag dropped. */
  private call(): void {
    const r = this.r;
    const op = [0xf1, 0xfa, 0xf4, 0xf2][r.int(4)]!; // CALL STATICCALL DELEGATECALL CALLCODE
    this.push(r.int(64)); // out size
    this.push(0); // out offset
    this.push(r.int(100)); // in size
    this.push(0); // in offset
    if (op === 0xf1 || op === 0xf2) this.push(r.chance(0.5) ? 0 : r.int(1000)); // value
    const t = r.int(10);
    if (t < 6) this.push(contractAt(r.int(CONTRACTS)));
    else if (t < 9)
      this.push(1 + r.int(forkAtLeast(this.fork, 'prague') ? 17 : 9)); // precompiles 1–9 (–0x11)
    else this.push(EOA[r.int(EOAS)]!);
    if (r.chance(0.5))
      this.out.push(0x5a); // GAS: all that is left
    else this.push(Uint8Array.of(r.int(256), r.int(256)));
    this.out.push(op, 0x50);
  }

  /** Init code for a child: returns `runtime`, reverts, or destroys itself. */
  private child(): Uint8Array {
    const r = this.r;
    const k = r.int(3);
    if (k === 1) return Uint8Array.of(0x60, 0, 0x60, 0, 0xfd); // REVERT
    if (k === 2) return Uint8Array.of(0x33, 0xff); // SELFDESTRUCT(CALLER)
    const runtime = Uint8Array.of(0x60, r.int(256), 0x60, 0, 0x55, 0x00); // SSTORE(0, x)
    const n = runtime.length;
    return Uint8Array.of(0x60, n, 0x60, 12, 0x60, 0, 0x39, 0x60, n, 0x60, 0, 0xf3, ...runtime);
  }

  private create(): void {
    const r = this.r;
    const init = this.child();
    // MSTORE the init code (≤ 32 bytes) at 0, left-aligned, then CREATE(value, 0, len) or CREATE2.
    const word = new Uint8Array(32);
    word.set(init);
    this.push(word);
    this.push(0);
    this.out.push(0x52);
    if (r.chance(0.5)) {
      this.push(r.bytes(2)); // salt
      this.push(init.length);
      this.push(0);
      this.push(r.int(3));
      this.out.push(0xf5, 0x50);
    } else {
      this.push(init.length);
      this.push(0);
      this.push(r.int(3));
      this.out.push(0xf0, 0x50);
    }
  }

  private snippet(): void {
    const r = this.r;
    const k = r.int(15);
    if (k < 3) {
      // Binary arithmetic
      this.value();
      this.value();
      this.out.push(
        [
          0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17,
          0x18, 0x1a, 0x1b, 0x1c, 0x1d,
        ][r.int(21)]!,
        0x50,
      );
    } else if (k === 3) {
      this.value();
      this.value();
      this.value();
      this.out.push(r.chance(0.5) ? 0x08 : 0x09, 0x50); // ADDMOD MULMOD
    } else if (k === 4) {
      // SSTORE(slot, value | 0)
      if (r.chance(0.3)) this.push(0);
      else this.value();
      this.push(r.int(6));
      this.out.push(0x55);
    } else if (k === 5) {
      this.push(r.int(6));
      this.out.push(0x54, 0x50); // SLOAD
    } else if (k === 6) {
      // Transient storage and MCOPY (invalid before Cancun: the call halts)
      if (!forkAtLeast(this.fork, 'cancun') && r.chance(0.7)) return;
      const op = r.int(3);
      if (op === 0) {
        this.value();
        this.push(r.int(4));
        this.out.push(0x5d); // TSTORE
      } else if (op === 1) {
        this.push(r.int(4));
        this.out.push(0x5c, 0x50); // TLOAD
      } else {
        this.push(r.int(40));
        this.push(r.int(40));
        this.push(r.int(40));
        this.out.push(0x5e); // MCOPY
      }
    } else if (k === 7) {
      // LOG0–LOG4 of memory
      const n = r.int(5);
      for (let i = 0; i < n; i++) this.value();
      this.push(r.int(64));
      this.push(r.int(64));
      this.out.push(0xa0 + n);
    } else if (k === 8) {
      this.value();
      this.push(r.int(64));
      this.out.push(0x52); // MSTORE
    } else if (k === 9) {
      // Environment and other accounts
      const ops = [0x3a, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x48, 0x38, 0x5a, 0x59];
      if (forkAtLeast(this.fork, 'cancun')) ops.push(0x4a);
      if (r.chance(0.5)) this.out.push(ops[r.int(ops.length)]!, 0x50);
      else {
        this.push(contractAt(r.int(CONTRACTS + 2)));
        this.out.push([0x31, 0x3b, 0x3f][r.int(3)]!, 0x50); // BALANCE EXTCODESIZE EXTCODEHASH
      }
    } else if (k === 10) {
      this.push(r.int(64));
      this.push(r.int(64));
      this.out.push(0x20, 0x50); // KECCAK256
    } else if (k < 13) this.call();
    else if (k === 13) this.create();
    else {
      this.out.push(0x43); // BLOCKHASH(NUMBER − 1)
      this.push(1);
      this.out.push(0x90, 0x03, 0x40, 0x50);
    }
  }

  /** How the code ends: STOP, RETURN, REVERT, SELFDESTRUCT, a bad jump or an invalid opcode. */
  private end(): void {
    const r = this.r;
    const k = r.int(8);
    if (k < 3) this.out.push(0x00);
    else if (k === 3) {
      this.push(32);
      this.push(0);
      this.out.push(0xf3);
    } else if (k === 4) {
      this.push(r.int(32));
      this.push(0);
      this.out.push(0xfd);
    } else if (k === 5) {
      this.push(r.chance(0.5) ? EOA[r.int(EOAS)]! : contractAt(r.int(CONTRACTS)));
      this.out.push(0xff);
    } else if (k === 6) {
      this.push(3);
      this.out.push(0x56); // JUMP to a non-JUMPDEST
    } else this.out.push(0xfe);
  }

  code(): Uint8Array {
    const n = 1 + this.r.int(12);
    for (let i = 0; i < n; i++) this.snippet();
    this.end();
    return Uint8Array.from(this.out);
  }
}

interface Case {
  readonly rules: ChainRules;
  readonly env: BlockEnv;
  readonly contracts: readonly { code: Uint8Array; storage: [Uint8Array, Uint8Array][]; balance: bigint }[];
  readonly txs: readonly { tx: TypedTransaction; sender: Uint8Array }[];
}

function randomCase(seed: number, fork: Fork): Case {
  const r = new Prng(seed);
  const rules: ChainRules = { ...defaultChainRules, fork };
  const common = makeCommon(rules);
  const contracts = Array.from({ length: CONTRACTS }, () => ({
    code: new CodeGen(r, fork).code(),
    storage: Array.from(
      { length: r.int(4) },
      (_, i) => [slotWord(i), r.bytes(1 + r.int(32))] as [Uint8Array, Uint8Array],
    ),
    balance: r.chance(0.5) ? 0n : BigInt(r.int(1_000_000)),
  }));
  const nonces = new Array<bigint>(EOAS).fill(0n);
  const txs: { tx: TypedTransaction; sender: Uint8Array }[] = [];
  for (let i = 0; i < TXS; i++) {
    const from = r.int(EOAS);
    const k = r.int(20);
    let to: Uint8Array | undefined;
    if (k < 14) to = contractAt(r.int(CONTRACTS));
    else if (k < 16)
      to = contractAt(CONTRACTS + r.int(2)); // nothing there (yet)
    else if (k < 18) {
      to = new Uint8Array(20);
      to[19] = 1 + r.int(forkAtLeast(fork, 'prague') ? 17 : 10);
    }
    const data = to === undefined ? new CodeGen(r, fork).code() : r.bytes(r.int(130));
    const gasLimit = [30_000n, 50_000n, 80_000n, 150_000n, 400_000n][r.int(5)]! + BigInt(r.int(2000));
    const base = {
      nonce: nonces[from]!,
      to,
      value: r.chance(0.5) ? 0n : BigInt(r.int(10_000)),
      data,
      gasLimit,
    };
    const type = r.int(3);
    const accessList = r.chance(0.3)
      ? [
          {
            address: `0x${toHex(contractAt(r.int(CONTRACTS)))}` as `0x${string}`,
            storageKeys: [`0x${toHex(slotWord(r.int(6)))}` as `0x${string}`],
          },
        ]
      : [];
    const tx =
      type === 0
        ? createLegacyTx({ ...base, gasPrice: 3_000_000_000n }, { common })
        : type === 1
          ? createAccessList2930Tx({ ...base, gasPrice: 3_000_000_000n, accessList }, { common })
          : createFeeMarket1559Tx(
              {
                ...base,
                maxFeePerGas: 5_000_000_000n,
                maxPriorityFeePerGas: BigInt(r.int(2)) * 10n ** 9n,
                accessList,
              },
              { common },
            );
    nonces[from]! += 1n;
    txs.push({ tx: tx.sign(KEYS[from]!), sender: EOA[from]! });
  }
  const env: BlockEnv = {
    number: 9n,
    timestamp: 1_700_000_900n,
    coinbase: EOA[r.int(EOAS)]!,
    gasLimit: 30_000_000n,
  };
  return { rules, env, contracts, txs };
}

function genesis(c: Case): StateTree {
  const st = new StateTree();
  for (const a of EOA)
    st.putAccount(a, makeAccount({ nonce: 0n, balance: 10n ** 20n, codeHash: EMPTY_CODE_HASH }));
  c.contracts.forEach((k, i) => {
    const codeHash = st.putCode(k.code);
    st.putAccount(contractAt(i), makeAccount({ nonce: 1n, balance: k.balance, codeHash }));
    for (const [slot, value] of k.storage) st.putStorage(contractAt(i), slot, value);
  });
  return st;
}

/**
 * The case's genesis as a miner holds it: known by its root, every account and code proven,
 * each contract slot left out of the bag with odds 1 in 4 (drawn from `seed`, the same for both engines).
 */
function partialGenesis(c: Case, seed: number): StateTree {
  const full = genesis(c);
  const r = new Prng(seed);
  const bag = new NodeBag();
  bag.addNodes(full.proveAccounts([...EOA, ...c.contracts.map((_, i) => contractAt(i))]));
  c.contracts.forEach((k, i) => {
    const kept = k.storage.filter(() => r.int(4) !== 0).map(([slot]) => slot);
    if (kept.length > 0) bag.addNodes(full.proveStorageMany(contractAt(i), kept));
    bag.add(k.code);
  });
  return StateTree.fromRootHash(full.root(), { source: bag });
}

/**
 * The case's block in `engine`, one execute() per transaction, or with `batches` (a seed) cut
 * into executeBatch calls of random sizes.
 */
async function run(c: Case, engine: EngineName, partialSeed?: number, batches?: number) {
  const state = partialSeed === undefined ? genesis(c) : partialGenesis(c, partialSeed);
  const ex = await BlockExecutor.create(state, c.env, c.rules, {
    engine,
    common: makeCommon(c.rules),
    recordAccesses: false,
    batch: batches !== undefined,
  });
  if (ex.engine !== engine) throw new Error(`asked for ${engine}, running ${ex.engine}`);
  const results: TxOutcome[] = [];
  if (batches === undefined) for (const { tx, sender } of c.txs) results.push(await ex.execute(tx, sender));
  else {
    const r = new Prng(batches);
    for (let i = 0; i < c.txs.length; ) {
      const n = 1 + r.int(24);
      results.push(...(await ex.executeBatch(c.txs.slice(i, i + n))));
      i += n;
    }
  }
  const outcomes: string[] = [];
  for (const o of results) {
    if (o.status !== 'included') {
      const m = o.error.meta;
      const key = [m.address, m.slot, m.hash].map((v) => (v instanceof Uint8Array ? toHex(v) : '')).join(':');
      outcomes.push(`${o.status} ${o.error.code} ${o.status === 'missing' ? key : ''}`);
      continue;
    }
    const rc = o.receipt;
    const logs = rc.logs.map((l) => `${toHex(l.address)}:${l.topics.map(toHex).join(',')}:${toHex(l.data)}`);
    const created = rc.contractAddress === undefined ? '' : toHex(rc.contractAddress);
    outcomes.push(`${rc.status} ${rc.gasUsed} ${created} ${logs.join(' ')}`);
  }
  const done = await ex.finish();
  const replay = genesis(c);
  for (const u of done.updates) applyAccountUpdate(replay, u);
  const updates = done.updates
    .map((u) =>
      u.deleted
        ? `${toHex(u.address)} deleted`
        : `${toHex(u.address)} ${u.nonce} ${u.balance} ${u.code === undefined ? '' : toHex(u.code)} ${u.clearStorage} ${u.storage
            .map((s) => `${toHex(s.slot)}=${toHex(s.value)}`)
            .sort()
            .join(',')}`,
    )
    .sort();
  return {
    outcomes,
    root: toHex(done.stateRoot),
    replayed: toHex(replay.root()),
    updates,
    batched: ex.batchedTransactions,
  };
}

skipRevmWhereUnbuilt('revm against @ethereumjs/evm over random contract calls');

// Without the addon the cases are listed as skipped (above), not run on one engine twice.
const describeRevm = revmAvailable() ? describe : describe.skip;

describeRevm('revm against @ethereumjs/evm over random contract calls', () => {
  const cases = FORKS.flatMap((fork) => SEEDS.map((seed) => ({ fork, seed })));
  it.each(cases)('$fork, seed $seed: same outcomes, state root and updates', async ({ fork, seed }) => {
    const c = randomCase(seed * 7919 + FORKS.indexOf(fork), fork);
    const reference = await run(c, 'ethereumjs');
    // The fuzz means something: most transactions run code, some revert or fail.
    const statuses = reference.outcomes.map((o) => o.split(' ')[0]);
    expect(statuses.filter((s) => s === '1').length).toBeGreaterThan(3);
    expect(statuses.filter((s) => s === '0').length).toBeGreaterThan(3);
    const revm = await run(c, 'revm');
    expect(revm.outcomes).toEqual(reference.outcomes);
    expect(revm.root).toBe(reference.root);
    // The updates replay to the same root at every fork (before Cancun they include contracts
    // destroyed and then sent value in the same block: their code must go too).
    expect(reference.replayed).toBe(reference.root);
    expect(revm.replayed).toBe(revm.root);
  });
});

describeRevm('revm against @ethereumjs/evm over random contract calls, witness gaps mid-block', () => {
  const cases = FORKS.flatMap((fork) => SEEDS.map((seed) => ({ fork, seed })));
  let missing = 0;
  let ran = 0;
  it.each(cases)(
    '$fork, seed $seed: the same transactions abort on the same key; the rest end the same',
    async ({ fork, seed }) => {
      const c = randomCase(seed * 7919 + FORKS.indexOf(fork), fork);
      const reference = await run(c, 'ethereumjs', seed);
      const statuses = reference.outcomes.map((o) => o.split(' ')[0]);
      ran += statuses.filter((s) => s === '1').length;
      missing += statuses.filter((s) => s === 'missing').length;
      const revm = await run(c, 'revm', seed);
      expect(revm.outcomes).toEqual(reference.outcomes);
      expect(revm.root).toBe(reference.root);
      expect(reference.replayed).toBe(reference.root);
      expect(revm.replayed).toBe(revm.root);
    },
  );
  it('the gaps were hit: transactions aborted MISSING_NODE mid-block, and others ran', () => {
    expect(missing).toBeGreaterThan(cases.length);
    expect(ran).toBeGreaterThan(3 * cases.length);
  });
});

describeRevm('revm batches against revm one call per transaction, random blocks', () => {
  const cases = FORKS.flatMap((fork) => SEEDS.map((seed) => ({ fork, seed })));
  let batched = 0;
  let total = 0;
  let missing = 0;
  for (const partial of [false, true]) {
    it.each(cases)(
      `$fork, seed $seed${partial ? ', witness gaps' : ''}: same outcomes, state root and updates`,
      async ({ fork, seed }) => {
        const c = randomCase(seed * 7919 + FORKS.indexOf(fork), fork);
        const gaps = partial ? seed : undefined;
        const one = await run(c, 'revm', gaps);
        const batch = await run(c, 'revm', gaps, seed * 31 + 7);
        expect(batch.outcomes).toEqual(one.outcomes);
        expect(batch.root).toBe(one.root);
        expect(batch.updates).toEqual(one.updates);
        expect(batch.replayed).toBe(batch.root);
        expect(one.batched).toBe(0);
        batched += batch.batched;
        total += c.txs.length;
        missing += one.outcomes.filter((o) => o.startsWith('missing')).length;
      },
    );
  }
  it('most transactions ran inside batches, and gaps aborted some mid-batch', () => {
    expect(batched).toBeGreaterThan(total / 2);
    expect(missing).toBeGreaterThan(cases.length);
  });
});
