/**
 * What BlockExecutor does itself instead of @ethereumjs/vm's runTx, against runTx on a full
 * @ethereumjs/statemanager state: gas refunds (EIP-3529 cap), access lists on EIP-2930 and
 * EIP-1559 transactions, contract creation (plain, reverting, out of gas), out-of-gas calls,
 * transactions to precompiles (with and without data), value to oneself, the coinbase as
 * sender and as recipient, touched empty accounts (EIP-161), self-destructs, calls that move
 * value inside the EVM. Same receipts (status, gas, logs, created address) and state root, with
 * the transfer fast path on and off, for @ethereumjs/tx transactions and for SignedTx decoded
 * from their bytes (what the miner executes), over a full tree and over a tree known only by
 * its root whose nodes come from a bag. The block's logical updates replay to the same root.
 *
 * Every scenario runs at each fork from Shanghai to Osaka, the chain rules read from a geth
 * genesis.json whose config schedules that fork at time 0. Cancun and later add: a contract
 * compiled by solc at its default EVM version (transient storage, MCOPY, SELFDESTRUCT under
 * EIP-6780 both ways), BLOBBASEFEE / BLOBHASH, CLZ (Osaka), and the EIP-7623 calldata floor
 * (Prague), including a transaction whose gas limit is below the floor.
 *
 * Every executor case runs with both engines (revm where its addon is built, and
 * @ethereumjs/evm): the same expectations, so each is held to runTx and so to the other.
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import {
  type AccessList,
  createAccessList2930Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { Account, Address, generateAddress, privateToAddress } from '@ethereumjs/util';
import { createVM, runTx } from '@ethereumjs/vm';
import { describe, expect, it } from '@jest/globals';
import { EMPTY_CODE_HASH, makeAccount, NodeBag, StateTree, toHex } from '@monsoon/dsm-tree';
import {
  type BlockEnv,
  BlockExecutor,
  type ChainRules,
  chainRulesOf,
  decodeSignedTx,
  type EngineName,
  type ExecutableTx,
  emptyAccessSet,
  type Fork,
  forkAtLeast,
  makeCommon,
  mergeAccessSet,
  preExecute,
  witnessOf,
} from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { applyAccountUpdate, parseGenesis } from '@monsoon/protocol';
import { cancunProbeArtifact } from '../fixtures/cancunProbeArtifact.js';
import { ENGINES, skipRevmWhereUnbuilt } from './engines.js';

/** A chain's rules and the Common made from them. */
interface Chain {
  readonly rules: ChainRules;
  readonly common: Common;
}

const blob = { target: 3, max: 6, baseFeeUpdateFraction: 3338477 };
/** Every fork key up to `fork` at 0, as geth writes a dev chain's genesis.json. */
function gethConfig(fork: Fork): Record<string, unknown> {
  const config: Record<string, unknown> = { chainId: 4242, terminalTotalDifficulty: 0 };
  for (const k of ['homestead', 'eip150', 'eip155', 'eip158', 'byzantium', 'constantinople', 'petersburg']) {
    config[`${k}Block`] = 0;
  }
  for (const k of ['istanbul', 'berlin', 'london', 'mergeNetsplit']) config[`${k}Block`] = 0;
  const times: [Fork, string][] = [
    ['shanghai', 'shanghaiTime'],
    ['cancun', 'cancunTime'],
    ['prague', 'pragueTime'],
    ['osaka', 'osakaTime'],
  ];
  const schedule: Record<string, unknown> = {};
  for (const [f, key] of times) {
    if (!forkAtLeast(fork, f)) break;
    config[key] = 0;
    if (f !== 'shanghai') schedule[f] = blob;
  }
  if (Object.keys(schedule).length > 0) config.blobSchedule = schedule;
  return config;
}

/** The chain a geth genesis.json scheduling `fork` at time 0 starts. */
function chainAt(fork: Fork): Chain {
  const genesis = parseGenesis({ config: gethConfig(fork), nonce: '0x0', difficulty: '0x0', alloc: {} });
  const rules = chainRulesOf(genesis);
  return { rules, common: makeCommon(rules) };
}

const SHANGHAI = chainAt('shanghai');
const rules = SHANGHAI.rules;
const common = SHANGHAI.common;

const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const word = (n: number | bigint): Uint8Array => {
  const b = new Uint8Array(32);
  let v = BigInt(n);
  for (let i = 31; i >= 0 && v > 0n; i--, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
};
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

/** SSTORE(cd[0:32], cd[32:64]); LOG1(topic cd[0:32]). */
const STORE = hexBytes('602035600035556000356000600' + '0a100');
/** SSTORE(cd[0:32], cd[32:64]); SSTORE(cd[0:32], cd[64:96]): set and reset in one transaction. */
const STORE2 = hexBytes('602035600035556040356000355500');
/** SELFDESTRUCT(cd[0:32]). */
const DESTRUCT = hexBytes('600035ff');
/** An endless loop: runs out of gas. */
const LOOP = hexBytes('5b600056');
/** CALL(gas, cd[0:32], callvalue, no data): moves value on, to anything (a precompile too). */
const FORWARD = hexBytes('60006000600060003460003' + '55af15000');
/** REVERT(0, 0). */
const REVERT = hexBytes('60006000fd');

/** Init code that returns `runtime` as the new contract's code. */
function initFor(runtime: Uint8Array): Uint8Array {
  const n = runtime.length;
  return cat(Uint8Array.from([0x60, n, 0x60, 12, 0x60, 0, 0x39, 0x60, n, 0x60, 0, 0xf3]), runtime);
}

interface GenesisAccount {
  readonly address: Uint8Array;
  readonly balance: bigint;
  readonly nonce?: bigint;
  readonly code?: Uint8Array;
  readonly storage?: readonly [Uint8Array, Uint8Array][];
}

interface Scenario {
  readonly name: string;
  readonly chain: Chain;
  readonly env: BlockEnv;
  readonly genesis: readonly GenesisAccount[];
  readonly txs: readonly { readonly tx: TypedTransaction; readonly sender: Uint8Array }[];
  /** What runTx's outcomes must show for the scenario to test what it means to. */
  readonly check?: (outcomes: readonly Outcome[]) => void;
}

type Outcome =
  | 'refused'
  | {
      status: number;
      gasUsed: bigint;
      cumulative: bigint;
      logs: string[];
      created: string | undefined;
    };

const KEYS = Array.from({ length: 6 }, (_, i) => keccak.keccak256(Uint8Array.of(7, i)));
const ADDRS = KEYS.map((k) => privateToAddress(k));
const at = (b: number): Uint8Array => new Uint8Array(20).fill(b);
const STORE_AT = at(0x51);
const STORE2_AT = at(0x52);
const DESTRUCT_AT = at(0xde);
const LOOP_AT = at(0x10);
const FORWARD_AT = at(0xf0);
const REVERT_AT = at(0x7e);
/** An account that exists and is empty (nonce 0, balance 0, no code): EIP-161 removes it when touched. */
const EMPTY_AT = at(0xe0);
const precompile = (n: number): Uint8Array => {
  const a = new Uint8Array(20);
  a[19] = n;
  return a;
};

function baseGenesis(): GenesisAccount[] {
  return [
    ...ADDRS.map((address) => ({ address, balance: 10n ** 21n })),
    {
      address: STORE_AT,
      balance: 0n,
      code: STORE,
      storage: [1, 2, 3, 4, 5].map((i) => [word(i), word(100 + i)] as [Uint8Array, Uint8Array]),
    },
    { address: STORE2_AT, balance: 0n, code: STORE2 },
    { address: DESTRUCT_AT, balance: 5n * 10n ** 18n, code: DESTRUCT, storage: [[word(9), word(9)]] },
    { address: LOOP_AT, balance: 0n, code: LOOP },
    { address: FORWARD_AT, balance: 0n, code: FORWARD },
    { address: REVERT_AT, balance: 0n, code: REVERT },
    { address: EMPTY_AT, balance: 0n },
  ];
}

/** Signs transactions from each key, nonces counted per sender. */
class Signer {
  private readonly nonces = new Map<number, bigint>();
  readonly txs: { tx: TypedTransaction; sender: Uint8Array }[] = [];

  constructor(private readonly common: Common) {}

  add(
    from: number,
    kind: 'legacy' | '2930' | '1559',
    fields: {
      to?: Uint8Array;
      value?: bigint;
      data?: Uint8Array;
      gasLimit?: bigint;
      accessList?: AccessList;
      tip?: bigint;
    },
  ): void {
    const nonce = this.nonces.get(from) ?? 0n;
    this.nonces.set(from, nonce + 1n);
    const base = {
      nonce,
      to: fields.to,
      value: fields.value ?? 0n,
      data: fields.data ?? new Uint8Array(0),
      gasLimit: fields.gasLimit ?? 200_000n,
    };
    const accessList = fields.accessList ?? [];
    const common = this.common;
    const tx =
      kind === 'legacy'
        ? createLegacyTx({ ...base, gasPrice: 3_000_000_000n }, { common })
        : kind === '2930'
          ? createAccessList2930Tx({ ...base, gasPrice: 3_000_000_000n, accessList }, { common })
          : createFeeMarket1559Tx(
              {
                ...base,
                maxFeePerGas: 5_000_000_000n,
                maxPriorityFeePerGas: fields.tip ?? 1_000_000_000n,
                accessList,
              },
              { common },
            );
    this.txs.push({ tx: tx.sign(KEYS[from]!), sender: ADDRS[from]! });
  }
}

const hexAddr = (a: Uint8Array): `0x${string}` => `0x${toHex(a)}`;
const ENV = (coinbase: Uint8Array): BlockEnv => ({
  number: 3n,
  timestamp: 1_700_000_100n,
  coinbase,
  gasLimit: 30_000_000n,
});

function scenarios(chain: Chain): Scenario[] {
  const out: Scenario[] = [];

  // Refunds, access lists, creations, out of gas, precompiles, self-destructs, EVM value moves.
  const a = new Signer(chain.common);
  a.add(0, '1559', { to: STORE_AT, data: cat(word(1), word(0)) }); // clear: refund
  a.add(1, 'legacy', { to: STORE_AT, data: cat(word(2), word(0)), gasLimit: 30_000n }); // refund above the cap
  a.add(2, '1559', { to: STORE2_AT, data: cat(word(7), word(1), word(0)) }); // set and reset
  a.add(3, '2930', {
    to: STORE_AT,
    data: cat(word(3), word(77)),
    accessList: [
      { address: hexAddr(STORE_AT), storageKeys: [hexAddr(word(3)), hexAddr(word(4))] },
      { address: hexAddr(ADDRS[5]!), storageKeys: [] },
    ],
  });
  a.add(4, '1559', {
    to: STORE_AT,
    data: cat(word(4), word(0)),
    accessList: [{ address: hexAddr(STORE_AT), storageKeys: [hexAddr(word(4))] }],
  });
  a.add(5, '1559', { to: FORWARD_AT, value: 1000n, data: word(BigInt(`0x${toHex(ADDRS[0]!)}`)) }); // value on
  a.add(0, '1559', { to: FORWARD_AT, value: 7n, data: word(99n) }); // value to a new account via CALL
  a.add(1, '1559', { to: FORWARD_AT, value: 5n, data: word(2n) }); // CALL to a precompile, with value
  a.add(2, 'legacy', { to: LOOP_AT, gasLimit: 60_000n }); // out of gas
  a.add(3, '1559', { to: REVERT_AT, gasLimit: 60_000n }); // reverts
  a.add(4, '1559', { data: initFor(STORE) }); // creation
  a.add(5, 'legacy', { data: initFor(STORE), value: 10n ** 15n }); // creation with value
  a.add(0, '1559', { data: REVERT }); // creation that reverts
  a.add(1, '1559', { data: LOOP, gasLimit: 100_000n }); // creation out of gas
  a.add(2, '1559', { to: precompile(1), value: 3n }); // plain-looking transfer to ECRECOVER
  a.add(3, 'legacy', { to: precompile(4), value: 0n }); // to IDENTITY, nothing sent
  a.add(4, '1559', { to: precompile(2), data: Uint8Array.of(1, 2, 3) }); // SHA256 with data
  // ECRECOVER: out of gas; from Prague 25000 is below the calldata floor (26120), so it is given
  // enough to run, and pays the floor rather than the 26048 it used.
  const ecrecoverGas = forkAtLeast(chain.rules.fork, 'prague') ? 26_500n : 25_000n;
  a.add(5, '1559', { to: precompile(1), data: new Uint8Array(128).fill(1), gasLimit: ecrecoverGas });
  a.add(0, '1559', { to: precompile(9), data: new Uint8Array(3) }); // BLAKE2F with bad input: fails
  a.add(1, '1559', { to: DESTRUCT_AT, data: word(BigInt(`0x${toHex(ADDRS[2]!)}`)) }); // self-destruct
  a.add(2, '1559', { to: DESTRUCT_AT, data: word(1n) }); // a destroyed account again (now empty)
  a.add(3, '1559', { to: ADDRS[3]!, value: 12345n }); // value to oneself
  a.add(3, 'legacy', { to: ADDRS[3]!, value: 0n }); // nothing to oneself
  a.add(4, '1559', { to: EMPTY_AT, value: 0n }); // touches an empty account: it goes
  a.add(5, '1559', { to: at(0x99), value: 0n }); // touches nothing new
  a.add(5, '1559', { to: at(0x98), value: 1n }); // creates an account
  a.add(0, '1559', { to: STORE_AT, data: cat(word(5), word(0)), tip: 0n }); // no tip: coinbase gets 0
  out.push({
    name: 'EVM features',
    chain,
    env: ENV(at(0xcb)),
    genesis: baseGenesis(),
    txs: a.txs,
    check: (outcomes) => {
      const statuses = outcomes.map((o) => (o === 'refused' ? -1 : o.status));
      expect(statuses).not.toContain(-1);
      expect(statuses.filter((x) => x === 0).length).toBeGreaterThanOrEqual(4); // OOG, reverts, bad precompile input
      expect(outcomes.filter((o) => o !== 'refused' && o.created !== undefined).length).toBeGreaterThan(1);
    },
  });

  // The coinbase sends, receives, and is paid nothing while existing empty.
  const b = new Signer(chain.common);
  b.add(0, '1559', { to: ADDRS[1]!, value: 10n }); // coinbase is the sender
  b.add(1, '1559', { to: ADDRS[0]!, value: 20n }); // coinbase is the recipient
  b.add(0, 'legacy', { to: ADDRS[0]!, value: 30n }); // coinbase sends to itself
  b.add(0, '1559', { to: STORE_AT, data: cat(word(1), word(3)) }); // coinbase calls a contract
  b.add(2, '1559', { to: FORWARD_AT, value: 9n, data: word(BigInt(`0x${toHex(ADDRS[0]!)}`)) });
  out.push({ name: 'coinbase is a sender', chain, env: ENV(ADDRS[0]!), genesis: baseGenesis(), txs: b.txs });

  const c = new Signer(chain.common);
  c.add(1, '1559', { to: ADDRS[2]!, value: 10n, tip: 0n }); // pays the empty coinbase nothing
  c.add(2, '1559', { to: EMPTY_AT, value: 0n, tip: 0n }); // the coinbase is the recipient
  out.push({ name: 'empty coinbase', chain, env: ENV(EMPTY_AT), genesis: baseGenesis(), txs: c.txs });
  out.push(cancunScenario(chain), floorScenario(chain));
  return out;
}

const selector = (sig: keyof typeof cancunProbeArtifact.methodIdentifiers): Uint8Array =>
  hexBytes(cancunProbeArtifact.methodIdentifiers[sig]);

/** ABI calldata of `sig(uint256 key, bytes data)`. */
function keyAndBytes(
  sig: 'store(uint256,bytes)' | 'storeTwice(uint256,bytes)',
  key: number,
  data: Uint8Array,
) {
  const padded = new Uint8Array(Math.ceil(data.length / 32) * 32);
  padded.set(data);
  return cat(selector(sig), word(key), word(0x40), word(data.length), padded);
}

/** CancunProbe's Stored(key, data, callsThisTx) logs of an outcome: [key, callsThisTx] each. */
function storedLogs(o: Outcome, probe: Uint8Array): [bigint, bigint][] {
  if (o === 'refused') return [];
  return o.logs
    .filter((l) => l.startsWith(`${toHex(probe)}:`))
    .map((l) => {
      const [, topics, data] = l.split(':') as [string, string, string];
      const key = BigInt(`0x${topics.split(',')[1]}`);
      return [key, BigInt(`0x${data.slice(64, 128)}`)];
    });
}

const PROBE_DEPLOYER = 0;
/** Where the deployer's first transaction puts CancunProbe, and its two children (nonces 1 and 2). */
const PROBE_AT = generateAddress(ADDRS[PROBE_DEPLOYER]!, new Uint8Array(0));
const DESTROYED_CHILD = generateAddress(PROBE_AT, Uint8Array.of(1));
const KEPT_CHILD = generateAddress(PROBE_AT, Uint8Array.of(2));
/** BLOBBASEFEE → slot 0, BLOBHASH(0) → slot 1 (Cancun: 1 wei and 0, no blob ever). */
const BLOB_PROBE = hexBytes('4a5f555f4960015500');
const BLOB_PROBE_AT = at(0xb1);
/** CLZ(1) → slot 2 (Osaka, EIP-7939: 255). */
const CLZ_PROBE = hexBytes('60011e60025500');
const CLZ_PROBE_AT = at(0xc1);

/**
 * A solc-compiled contract at solc's default EVM version: runs from Cancun on, fails with an
 * invalid opcode before. Transient storage is per transaction, MCOPY copies, and EIP-6780 keeps
 * a child destroyed after the transaction that made it.
 */
function cancunScenario(chain: Chain): Scenario {
  const fork = chain.rules.fork;
  const s = new Signer(chain.common);
  const payload = Uint8Array.from({ length: 40 }, (_, i) => i + 1);
  s.add(PROBE_DEPLOYER, '1559', {
    data: hexBytes(cancunProbeArtifact.bytecode.slice(2)),
    gasLimit: 2_000_000n,
  });
  s.add(1, '1559', {
    to: PROBE_AT,
    data: keyAndBytes('storeTwice(uint256,bytes)', 7, payload),
    gasLimit: 600_000n,
  });
  s.add(2, '1559', {
    to: PROBE_AT,
    data: keyAndBytes('store(uint256,bytes)', 9, payload),
    gasLimit: 600_000n,
  });
  s.add(3, '1559', { to: PROBE_AT, data: selector('callsSoFar()') });
  s.add(4, '1559', {
    to: PROBE_AT,
    data: selector('makeAndDestroy()'),
    value: 10n ** 15n,
    gasLimit: 400_000n,
  });
  s.add(5, '1559', {
    to: PROBE_AT,
    data: selector('makeChild()'),
    value: 2n * 10n ** 15n,
    gasLimit: 400_000n,
  });
  s.add(1, '1559', { to: PROBE_AT, data: selector('destroyChild()') });
  s.add(2, '1559', { to: KEPT_CHILD, value: 5n }); // Cancun: it has code, no receive: reverts
  s.add(3, '1559', { to: BLOB_PROBE_AT });
  s.add(4, '1559', { to: CLZ_PROBE_AT });
  const genesis = [
    ...baseGenesis(),
    { address: BLOB_PROBE_AT, balance: 0n, code: BLOB_PROBE },
    { address: CLZ_PROBE_AT, balance: 0n, code: CLZ_PROBE },
  ];
  return {
    name: 'a solc contract at the default EVM version',
    chain,
    env: ENV(at(0xcb)),
    genesis,
    txs: s.txs,
    check: (outcomes) => {
      const status = outcomes.map((o) => (o === 'refused' ? -1 : o.status));
      expect(outcomes[0] !== 'refused' && outcomes[0]!.created).toBe(toHex(PROBE_AT));
      if (!forkAtLeast(fork, 'cancun')) {
        expect(status.slice(1, 3)).toEqual([0, 0]); // TSTORE / MCOPY: invalid opcode
        return;
      }
      expect(status).toEqual([1, 1, 1, 1, 1, 1, 1, 0, 1, forkAtLeast(fork, 'osaka') ? 1 : 0]);
      // The transient counter counts calls within a transaction and starts at 0 in each.
      expect(storedLogs(outcomes[1]!, PROBE_AT)).toEqual([
        [7n, 1n],
        [8n, 2n],
      ]);
      expect(storedLogs(outcomes[2]!, PROBE_AT)).toEqual([[9n, 1n]]);
    },
  };
}

/** EIP-7623 (Prague): calldata-heavy transactions pay at least the floor, or are refused below it. */
function floorScenario(chain: Chain): Scenario {
  const fork = chain.rules.fork;
  const s = new Signer(chain.common);
  const heavy = new Uint8Array(2000).fill(0x11);
  s.add(0, '1559', { to: ADDRS[5]!, data: heavy }); // floor 21000 + 10·4·2000 = 101000 > 53000
  s.add(1, 'legacy', { to: ADDRS[5]!, data: new Uint8Array(2000) }); // zeros: floor 41000 > 29000
  s.add(2, '1559', { to: STORE_AT, data: cat(word(1), word(0), heavy.subarray(0, 300)) }); // refund, then floor
  s.add(3, '2930', { to: LOOP_AT, data: heavy.subarray(0, 100), gasLimit: 80_000n }); // out of gas: all gas
  s.add(4, '1559', { to: ADDRS[5]!, data: heavy, gasLimit: 60_000n }); // Prague: below the floor
  return {
    name: 'calldata floor',
    chain,
    env: ENV(at(0xcb)),
    genesis: baseGenesis(),
    txs: s.txs,
    check: (outcomes) => {
      const gas = outcomes.map((o) => (o === 'refused' ? 'refused' : o.gasUsed));
      if (forkAtLeast(fork, 'prague')) {
        expect([gas[0], gas[1], gas[4]]).toEqual([101_000n, 41_000n, 'refused']);
      } else {
        expect([gas[0], gas[1]]).toEqual([53_000n, 29_000n]);
        expect(gas).not.toContain('refused');
      }
    },
  };
}

async function reference(s: Scenario): Promise<{ root: string; outcomes: Outcome[] }> {
  const { rules, common } = s.chain;
  const sm = new MerkleStateManager();
  for (const g of s.genesis) {
    const address = new Address(g.address);
    await sm.putAccount(address, new Account(g.nonce ?? 0n, g.balance));
    if (g.code !== undefined) await sm.putCode(address, g.code);
    for (const [slot, value] of g.storage ?? []) await sm.putStorage(address, slot, value);
  }
  const vm = await createVM({ common, stateManager: sm });
  const block = createBlock(
    { header: { ...s.env, baseFeePerGas: rules.baseFeePerGas, difficulty: 0n } },
    { common, skipConsensusFormatValidation: true },
  );
  const outcomes: Outcome[] = [];
  let used = 0n;
  for (const { tx } of s.txs) {
    try {
      const r = await runTx(vm, { tx, block, blockGasUsed: used, skipHardForkValidation: true });
      used += r.totalGasSpent;
      const receipt = r.receipt as { status: number; logs: [Uint8Array, Uint8Array[], Uint8Array][] };
      outcomes.push({
        status: receipt.status,
        gasUsed: r.totalGasSpent,
        cumulative: used,
        logs: receipt.logs.map(([a, t, d]) => `${toHex(a)}:${t.map(toHex).join(',')}:${toHex(d)}`),
        created: r.createdAddress === undefined ? undefined : toHex(r.createdAddress.bytes),
      });
    } catch {
      outcomes.push('refused');
    }
  }
  const cb = new Address(s.env.coinbase);
  const m = (await sm.getAccount(cb)) ?? new Account();
  m.balance += rules.blockReward;
  await sm.putAccount(cb, m);
  return { root: toHex(await sm.getStateRoot()), outcomes };
}

function genesisTree(s: Scenario): StateTree {
  const st = new StateTree();
  for (const g of s.genesis) {
    const codeHash = g.code === undefined ? EMPTY_CODE_HASH : st.putCode(g.code);
    st.putAccount(g.address, makeAccount({ nonce: g.nonce ?? 0n, balance: g.balance, codeHash }));
    for (const [slot, value] of g.storage ?? []) st.putStorage(g.address, slot, value);
  }
  return st;
}

type Input = 'ethereumjs' | 'SignedTx';

async function ours(state: StateTree, s: Scenario, fastTransfers: boolean, input: Input, engine: EngineName) {
  const { rules, common } = s.chain;
  const ex = await BlockExecutor.create(state, s.env, rules, { fastTransfers, common, engine });
  if (ex.engine !== engine) throw new Error(`asked for ${engine}, running ${ex.engine}`);
  const outcomes: Outcome[] = [];
  for (const { tx, sender } of s.txs) {
    const t: TypedTransaction | ExecutableTx =
      input === 'SignedTx' ? decodeSignedTx(tx.serialize(), common) : tx;
    const o = await ex.execute(t, sender);
    if (o.status === 'missing') throw o.error;
    if (o.status === 'invalid') {
      outcomes.push('refused');
      continue;
    }
    const r = o.receipt;
    outcomes.push({
      status: r.status,
      gasUsed: r.gasUsed,
      cumulative: r.cumulativeGasUsed,
      logs: r.logs.map((l) => `${toHex(l.address)}:${l.topics.map(toHex).join(',')}:${toHex(l.data)}`),
      created: r.contractAddress === undefined ? undefined : toHex(r.contractAddress),
    });
  }
  return { ...(await ex.finish()), outcomes };
}

const FORKS_RUN: readonly Fork[] = ['shanghai', 'cancun', 'prague', 'osaka'];
const ALL = FORKS_RUN.flatMap((f) => scenarios(chainAt(f)).map((s) => ({ ...s, fork: f })));

describe.each(ALL)('BlockExecutor vs runTx at $fork: $name', (s) => {
  let ref: Awaited<ReturnType<typeof reference>>;

  it('the scenario does what it is meant to (checked on runTx)', async () => {
    expect(s.chain.common.hardfork()).toBe(s.fork);
    ref = await reference(s);
    if (s.check !== undefined) s.check(ref.outcomes);
    else expect(ref.outcomes).not.toContain('refused');
  });

  const inputs: [boolean, Input][] = [
    [true, 'ethereumjs'],
    [false, 'ethereumjs'],
    [true, 'SignedTx'],
    [false, 'SignedTx'],
  ];
  skipRevmWhereUnbuilt(`${s.fork} ${s.name}`);
  it.each<[EngineName, boolean, Input]>(
    ENGINES.flatMap((e) => inputs.map(([f, i]) => [e, f, i] as [EngineName, boolean, Input])),
  )(
    '[%s] same receipts and state root (fast transfers %s, %s input); updates replay',
    async (engine, fast, input) => {
      const res = await ours(genesisTree(s), s, fast, input, engine);
      expect(res.outcomes).toEqual(ref.outcomes);
      expect(toHex(res.stateRoot)).toBe(ref.root);
      const replay = genesisTree(s);
      for (const u of res.updates) applyAccountUpdate(replay, u); // what a storage node does
      expect(toHex(replay.root())).toBe(ref.root);
    },
  );

  // Every pairing of pre-executing (client) and executing (miner) engine: the bag one engine's
  // reads make must be enough for the other.
  const pairs = ENGINES.flatMap((pre) => ENGINES.map((run) => [pre, run] as [EngineName, EngineName]));
  it.each(pairs)(
    '[pre %s, run %s] over a tree known only by its root, with a bag of what a first run read',
    async (preEngine, engine) => {
      // A client's flow: pre-execute on a full state, prove what was read (and the coinbase).
      const pre = await preExecute(genesisTree(s), s.env, s.chain.rules, s.txs, {
        common: s.chain.common,
        engine: preEngine,
      });
      const access = emptyAccessSet();
      for (const a of pre.accesses) mergeAccessSet(access, a);
      access.accounts.add(Buffer.from(s.env.coinbase).toString('latin1'));
      const full = genesisTree(s);
      const bag = new NodeBag();
      bag.addNodes(witnessOf(full, access));
      const partial = StateTree.fromRootHash(full.root(), { source: bag });
      const res = await ours(partial, s, true, 'SignedTx', engine);
      expect(res.outcomes).toEqual(ref.outcomes);
      expect(toHex(res.stateRoot)).toBe(ref.root);
    },
  );

  if (s.name === cancunScenario(s.chain).name && forkAtLeast(s.fork, 'cancun')) {
    it.each(ENGINES)(
      '[%s] EIP-6780: the child destroyed where it was made is gone, the older one keeps its code',
      async (engine) => {
        const state = genesisTree(s);
        await ours(state, s, true, 'SignedTx', engine);
        expect(state.getAccount(DESTROYED_CHILD)).toBeUndefined();
        const kept = state.getAccount(KEPT_CHILD);
        expect(kept?.balance).toBe(0n); // its balance went to the caller of destroyChild
        expect(toHex(kept!.codeHash)).not.toBe(toHex(EMPTY_CODE_HASH));
      },
    );
  }
});

describe('a slot deletion whose collapse needs a node the bag lacks', () => {
  // Two slots whose trie keys part at the first nibble: zeroing one collapses the root branch
  // of the storage trie onto the other's leaf, which no read brought in.
  const s1 = word(1);
  let s2 = word(2);
  for (let i = 2; keccak.keccak256(s2)[0]! >> 4 === keccak.keccak256(s1)[0]! >> 4; i++) s2 = word(i);
  const env = ENV(at(0xcb));
  const genesis: GenesisAccount[] = [
    { address: ADDRS[0]!, balance: 10n ** 21n },
    {
      address: STORE_AT,
      balance: 0n,
      code: STORE,
      storage: [
        [s1, word(1)],
        [s2, word(2)],
      ],
    },
  ];
  const signer = new Signer(common);
  signer.add(0, '1559', { to: STORE_AT, data: cat(s1, word(0)) });
  const { tx, sender } = signer.txs[0]!;
  const scenario: Scenario = { name: 'collapse', chain: SHANGHAI, env, genesis, txs: signer.txs };

  function partial(withSibling: boolean): StateTree {
    const full = genesisTree(scenario);
    const bag = new NodeBag();
    bag.addNodes(full.proveAccounts([ADDRS[0]!, STORE_AT, env.coinbase]));
    bag.addNodes(full.proveStorageMany(STORE_AT, withSibling ? [s1, s2] : [s1]));
    bag.add(STORE);
    return StateTree.fromRootHash(full.root(), { source: bag });
  }

  it.each(ENGINES)(
    '[%s] is MISSING and leaves the tree exactly as it was, nothing of the transaction applied',
    async (engine) => {
      const state = partial(false);
      const root = toHex(state.root());
      const ex = await BlockExecutor.create(state, env, rules, { common, engine });
      const o = await ex.execute(decodeSignedTx(tx.serialize(), common), sender);
      expect(o.status).toBe('missing');
      expect(ex.blockGasUsed).toBe(0n);
      expect(toHex(state.root())).toBe(root);
      const done = await ex.finish();
      expect(done.updates.map((u) => toHex(u.address))).toEqual([toHex(env.coinbase)]); // the reward only
    },
  );

  it.each(ENGINES)('[%s] with the sibling in the bag, gives what runTx gives', async (engine) => {
    const ref = await reference(scenario);
    const res = await ours(partial(true), scenario, true, 'SignedTx', engine);
    expect(res.outcomes).toEqual(ref.outcomes);
    expect(toHex(res.stateRoot)).toBe(ref.root);
  });
});
