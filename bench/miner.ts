/**
 * One miner in-process, no network: how many transactions it takes into blocks per second,
 * plain transfers and ERC-20 `transfer` calls separately, with the per-transaction cost split
 * (decoding, bag check, signature recovery, execution, state root and sealing).
 *
 *   npm run build && npm run bench -- miner [--accounts 100000] [--blocks 4] [--block-txs 2000]
 *                                            [--submission 200] [--retention 2] [--recovery-threads 1]
 *
 * The traffic is the workload's (hot 10% of accounts send and receive 90%), signed, over a
 * genesis of `--accounts` accounts holding ether and the MonsoonToken. Bags are built before
 * the clock starts, the way a client would: each block pre-executed on a full copy of the
 * state, each submission's access set proved against the block's parent, top `--retention`
 * levels left out.
 *
 * Two measurements per kind, same transactions, each on a fresh miner:
 * - execution only (one core): senders recovered beforehand; the clock runs over decoding, the
 *   bag check (hashing every node), execution into the pending block and sealing (state root,
 *   transactions and receipts roots, pruning back to r). Recovery is timed on its own on this
 *   thread, natively: that is the recovery rate per core.
 * - end to end: `Miner.submit` with every submission of a block in flight and recovery on a
 *   worker pool of `--recovery-threads`; the goal is ≥ 80% of recovery rate × those threads.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { TypedTransaction } from '@ethereumjs/tx';
import { NodeBag } from '@monsoon/dsm-tree';
import {
  decodeTransaction,
  defaultChainRules,
  emptyAccessSet,
  makeCommon,
  mergeAccessSet,
  nativeCustomCrypto,
  preExecute,
  recoverSenders,
  SenderRecoveryPool,
  witnessOf,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { Miner, type PreparedTx, type SenderRecovery } from '@monsoon/miner';
import {
  applyAccountUpdate,
  type Genesis,
  genesisState,
  parseGenesis,
  type SubmitRequest,
  TxStatus,
} from '@monsoon/protocol';
import { AccountSet, buildGenesis, TrafficGenerator } from '@monsoon/workload';
import { Progress } from './lib/progress.js';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '100000' },
    blocks: { type: 'string', default: '4' },
    'block-txs': { type: 'string', default: '2000' },
    submission: { type: 'string', default: '200' },
    retention: { type: 'string', default: '2' },
    'recovery-threads': { type: 'string', default: String(Math.max(1, cpus().length - 1)) },
  },
});
const N = Number(args.accounts);
const BLOCKS = Number(args.blocks);
const BLOCK_TXS = Number(args['block-txs']);
const SUBMISSION = Number(args.submission);
const RETENTION = Number(args.retention);
const THREADS = Number(args['recovery-threads']);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const rules = { ...defaultChainRules, gasLimit: BigInt(BLOCK_TXS) * 100_000n };
const common = makeCommon(rules.chainId, nativeCustomCrypto);
type Kind = 'transfer' | 'erc20';

/** One block's submissions, as a client sent them. */
interface PlannedBlock {
  readonly submissions: SubmitRequest[];
}

interface Split {
  decode: number;
  bag: number;
  recover: number;
  execute: number;
  seal: number;
}

/** The blocks of one kind, their bags built against each parent the way a client would. */
async function plan(
  genesis: Genesis,
  accounts: AccountSet,
  kind: Kind,
): Promise<{ blocks: PlannedBlock[]; bagBytes: number }> {
  const gen = new TrafficGenerator(
    { chainId: rules.chainId, erc20Share: kind === 'erc20' ? 1 : 0, seed: new TextEncoder().encode(kind) },
    { accounts },
  );
  const miner = await Miner.create(genesis, { rules, retention: RETENTION, maxBlockTransactions: BLOCK_TXS });
  const full = genesisState(genesis, { hash: keccak });
  const blocks: PlannedBlock[] = [];
  let bagBytes = 0;
  for (let b = 0; b < BLOCKS; b++) {
    const raws = gen.take(BLOCK_TXS).map((t) => t.raw);
    const txs = raws.map((raw) => decodeTransaction(raw, common));
    const senders = recoverSenders(txs) as Uint8Array[];
    const pre = await preExecute(
      full.snapshot(),
      miner.pendingEnv,
      rules,
      txs.map((tx, i) => ({ tx, sender: senders[i]! })),
      { common },
    );
    const submissions: SubmitRequest[] = [];
    for (let i = 0; i < raws.length; i += SUBMISSION) {
      const access = emptyAccessSet();
      for (const a of pre.accesses.slice(i, i + SUBMISSION)) mergeAccessSet(access, a);
      const bag = witnessOf(full, access, RETENTION);
      for (const n of bag) bagBytes += n.length;
      submissions.push({
        transactions: raws.slice(i, i + SUBMISSION),
        bag,
        prefetchedRoot: miner.head.header.stateRoot,
      });
    }
    for (const s of submissions) {
      const res = await miner.submit(s);
      const refused = res.results.find((r) => r.status !== TxStatus.Accepted);
      if (refused !== undefined)
        throw new Error(`planning: a ${kind} transaction was refused: ${refused.reason}`);
    }
    const sealed = await miner.seal();
    for (const s of sealed.shards) for (const u of s.accounts) applyAccountUpdate(full, u);
    blocks.push({ submissions });
  }
  return { blocks, bagBytes };
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Execution with senders recovered beforehand: every phase on this thread, timed apart. */
async function executionOnly(
  genesis: Genesis,
  blocks: PlannedBlock[],
  fastTransfers: boolean,
): Promise<Split> {
  const miner = await Miner.create(genesis, {
    rules,
    retention: RETENTION,
    maxBlockTransactions: BLOCK_TXS,
    fastTransfers,
  });
  const split: Split = { decode: 0, bag: 0, recover: 0, execute: 0, seal: 0 };
  for (const block of blocks) {
    for (const s of block.submissions) {
      let t0 = process.hrtime.bigint();
      const txs: TypedTransaction[] = s.transactions.map((raw) => decodeTransaction(raw, common));
      split.decode += ms(t0);
      t0 = process.hrtime.bigint();
      const bag = new NodeBag({ hash: keccak });
      bag.addNodes(s.bag);
      split.bag += ms(t0);
      t0 = process.hrtime.bigint();
      const senders = recoverSenders(txs);
      split.recover += ms(t0);
      const items: PreparedTx[] = txs.map((tx, i) => ({
        tx,
        raw: s.transactions[i]!,
        sender: senders[i] as Uint8Array,
      }));
      t0 = process.hrtime.bigint();
      const res = await miner.submitPrepared({ bag, prefetchedRoot: s.prefetchedRoot, items });
      split.execute += ms(t0);
      if (res.results.some((r) => r.status !== TxStatus.Accepted))
        throw new Error('execution-only run: a transaction was refused');
    }
    const t0 = process.hrtime.bigint();
    await miner.seal();
    split.seal += ms(t0);
  }
  return split;
}

/** Everything through Miner.submit, recovery on the pool, every submission of a block in flight. */
async function endToEnd(genesis: Genesis, blocks: PlannedBlock[], recovery: SenderRecovery): Promise<number> {
  const miner = await Miner.create(genesis, {
    rules,
    retention: RETENTION,
    maxBlockTransactions: BLOCK_TXS,
    recovery,
  });
  const t0 = process.hrtime.bigint();
  for (const block of blocks) {
    const results = await Promise.all(block.submissions.map((s) => miner.submit(s)));
    if (results.some((r) => r.results.some((x) => x.status !== TxStatus.Accepted)))
      throw new Error('end-to-end run: a transaction was refused');
    await miner.seal();
  }
  return ms(t0);
}

const perSec = (n: number, msTotal: number) => Math.round((n / msTotal) * 1000);
const us = (msTotal: number, n: number) => Number(((msTotal / n) * 1000).toFixed(1));

const status = new Progress();
const say = (m: string) => status.update(m);
say(`accounts: ${N.toLocaleString('en-US')}`);
const accounts = await AccountSet.create({
  seed: new TextEncoder().encode('monsoon-bench'),
  count: N,
  cacheDir: join(tmpdir(), 'monsoon-bench-accounts'),
});
const genesis = parseGenesis(buildGenesis(accounts, { chainId: rules.chainId }));
const pool = await SenderRecoveryPool.create({ threads: THREADS });
const txCount = BLOCKS * BLOCK_TXS;
const results: Record<string, unknown> = {};
const rows: string[] = [];
try {
  for (const kind of ['transfer', 'erc20'] as const) {
    say(`${kind}: building ${BLOCKS} blocks of ${BLOCK_TXS} with their bags`);
    const { blocks, bagBytes } = await plan(genesis, accounts, kind);
    const variants: [string, boolean][] =
      kind === 'transfer'
        ? [
            ['fast path', true],
            ['EVM', false],
          ]
        : [['EVM', true]];
    for (const [label, fast] of variants) {
      say(`${kind} (${label}): execution only`);
      const s = await executionOnly(genesis, blocks, fast);
      const execMs = s.decode + s.bag + s.execute + s.seal;
      const name = kind === 'transfer' ? (fast ? 'transfer' : 'transferEvm') : 'erc20';
      results[name] = {
        executionOnlyPerSec: perSec(txCount, execMs),
        recoveryPerSecOneCore: perSec(txCount, s.recover),
        microsecondsPerTx: {
          decode: us(s.decode, txCount),
          bagCheck: us(s.bag, txCount),
          recover: us(s.recover, txCount),
          execute: us(s.execute, txCount),
          rootAndSeal: us(s.seal, txCount),
        },
        bagBytesPerTx: Math.round(bagBytes / txCount),
      };
      rows.push(
        `| ${kind} (${label}) | ${perSec(txCount, execMs).toLocaleString('en-US')} | ${us(s.decode, txCount)} | ${us(s.bag, txCount)} | ${us(s.execute, txCount)} | ${us(s.seal, txCount)} | ${us(s.recover, txCount)} | ${perSec(txCount, s.recover).toLocaleString('en-US')} |`,
      );
    }
    say(`${kind}: end to end, recovery on ${THREADS} worker thread(s)`);
    const e2eMs = await endToEnd(genesis, blocks, pool);
    const r = results[kind] as Record<string, unknown> & { recoveryPerSecOneCore: number };
    r.endToEndPerSec = perSec(txCount, e2eMs);
    r.endToEndGoalPerSec = Math.round(0.8 * r.recoveryPerSecOneCore * THREADS);
  }
} finally {
  await pool.close();
}

status.clear();
console.log(
  `miner, ${N.toLocaleString('en-US')} accounts, ${BLOCKS} blocks × ${BLOCK_TXS} txs per kind, r = ${RETENTION}, submissions of ${SUBMISSION}`,
);
console.log(
  '| kind | exec-only tx/s (1 core) | decode µs | bag check µs | execute µs | root+seal µs | recover µs | recover/s (1 core) |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
for (const kind of ['transfer', 'erc20']) {
  const r = results[kind] as { endToEndPerSec: number; endToEndGoalPerSec: number; bagBytesPerTx: number };
  console.log(
    `${kind}: end to end ${r.endToEndPerSec.toLocaleString('en-US')} tx/s with ${THREADS} recovery thread(s) (goal ≥ ${r.endToEndGoalPerSec.toLocaleString('en-US')}); bag ${r.bagBytesPerTx} B/tx`,
  );
}
const out = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, loadAverage1m: loadavg()[0] },
  params: {
    accounts: N,
    blocks: BLOCKS,
    blockTxs: BLOCK_TXS,
    submission: SUBMISSION,
    retention: RETENTION,
    recoveryThreads: THREADS,
  },
  results,
};
const file = join(root, 'bench', 'results', 'miner.json');
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
console.log(`results: ${file}`);
