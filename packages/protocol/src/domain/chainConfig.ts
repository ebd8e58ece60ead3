/**
 * The `config` of a geth genesis.json: the chain id and the fork the chain runs, chosen as geth
 * chooses it. geth lists forks by block number up to the merge (homesteadBlock … londonBlock,
 * mergeNetsplitBlock) and by timestamp after it (shanghaiTime, cancunTime, pragueTime,
 * osakaTime, …); a fork is active from its block or time on, and the list must be in order with
 * no required fork left out (geth's CheckConfigForkOrder, whose messages these are). Cancun and
 * later need a `blobSchedule` entry, as geth requires.
 *
 * Monsoon runs one fork from its genesis to the end (a second engine takes the same setting):
 * the fork is the latest one active at the genesis block (number 0, the genesis timestamp). A
 * fork scheduled after the genesis is refused, not silently ignored; so is one Monsoon does not
 * execute (before London: Monsoon's base fee is EIP-1559's; Verkle, the BPO forks, Amsterdam).
 * A config that names no fork at all leaves the choice to the chain's default.
 */
import { badGenesis, jsonNumber, jsonObject } from './gethJson.js';

/**
 * The forks Monsoon executes, oldest first, by the names @ethereumjs/common gives them. London
 * stands for London, Arrow Glacier and Gray Glacier (they only delay the difficulty bomb, which
 * Monsoon's proof of work does not have); Paris is the merge (PREVRANDAO for DIFFICULTY).
 */
export const FORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka'] as const;

/** One of {@link FORKS}. */
export type Fork = (typeof FORKS)[number];

/** True when `fork` is `than` or a later fork. */
export function forkAtLeast(fork: Fork, than: Fork): boolean {
  return FORKS.indexOf(fork) >= FORKS.indexOf(than);
}

/** What a genesis config says about the chain. */
export interface ChainConfig {
  readonly chainId: bigint;
  /** The fork active at the genesis; undefined when the config names no fork. */
  readonly fork: Fork | undefined;
}

interface ScheduledFork {
  /** The config key. */
  readonly key: string;
  readonly by: 'block' | 'time';
  /** geth lets the list go on past it when it is absent. */
  readonly optional?: boolean;
  /** What Monsoon runs once it is active: a fork, or null for one Monsoon does not execute. */
  readonly runs?: Fork | null;
}

/** geth's fork list, in CheckConfigForkOrder's order. */
const SCHEDULE: readonly ScheduledFork[] = [
  { key: 'homesteadBlock', by: 'block' },
  { key: 'daoForkBlock', by: 'block', optional: true },
  { key: 'eip150Block', by: 'block' },
  { key: 'eip155Block', by: 'block' },
  { key: 'eip158Block', by: 'block' },
  { key: 'byzantiumBlock', by: 'block' },
  { key: 'constantinopleBlock', by: 'block' },
  { key: 'petersburgBlock', by: 'block' },
  { key: 'istanbulBlock', by: 'block' },
  { key: 'muirGlacierBlock', by: 'block', optional: true },
  { key: 'berlinBlock', by: 'block' },
  { key: 'londonBlock', by: 'block', runs: 'london' },
  { key: 'arrowGlacierBlock', by: 'block', optional: true, runs: 'london' },
  { key: 'grayGlacierBlock', by: 'block', optional: true, runs: 'london' },
  { key: 'mergeNetsplitBlock', by: 'block', optional: true, runs: 'paris' },
  { key: 'shanghaiTime', by: 'time', runs: 'shanghai' },
  { key: 'cancunTime', by: 'time', optional: true, runs: 'cancun' },
  { key: 'pragueTime', by: 'time', optional: true, runs: 'prague' },
  { key: 'osakaTime', by: 'time', optional: true, runs: 'osaka' },
  { key: 'verkleTime', by: 'time', optional: true, runs: null },
  { key: 'bpo1Time', by: 'time', optional: true, runs: null },
  { key: 'bpo2Time', by: 'time', optional: true, runs: null },
  { key: 'bpo3Time', by: 'time', optional: true, runs: null },
  { key: 'bpo4Time', by: 'time', optional: true, runs: null },
  { key: 'bpo5Time', by: 'time', optional: true, runs: null },
  { key: 'amsterdamTime', by: 'time', optional: true, runs: null },
];

/** Forks whose blob parameters geth requires in `config.blobSchedule` when they are scheduled. */
const BLOB_FORKS = [
  ['cancun', 'cancunTime'],
  ['prague', 'pragueTime'],
  ['osaka', 'osakaTime'],
] as const;

/** The chain id when the config gives none (Monsoon's default chain). */
export const DEFAULT_CHAIN_ID = 1337n;

/**
 * Reads `config` (absent: the default chain id, no fork named) for a genesis block with
 * `timestamp` and `difficulty` (a terminalTotalDifficulty it reaches makes London the merge).
 */
export function parseChainConfig(
  raw: unknown,
  genesis: { timestamp: bigint; difficulty: bigint },
): ChainConfig {
  const config = jsonObject(raw, 'config') ?? {};
  const chainId = jsonNumber(config.chainId, 'config.chainId') ?? DEFAULT_CHAIN_ID;
  const at = SCHEDULE.map((f) =>
    jsonNumber(config[f.key], `config.${f.key}`, f.by === 'time' ? 64 : undefined),
  );
  checkOrder(at);
  checkBlobSchedule(config);
  let latest: ScheduledFork | undefined;
  for (let i = 0; i < SCHEDULE.length; i++) {
    const f = SCHEDULE[i]!;
    const when = at[i];
    if (when === undefined) continue;
    const field = `config.${f.key}`;
    const genesisAt = f.by === 'block' ? 0n : genesis.timestamp;
    if (when > genesisAt) {
      badGenesis(
        field,
        `Monsoon runs one fork from its genesis; ${f.key} ${when} is after the genesis ${f.by === 'block' ? 'block 0' : `timestamp ${genesisAt}`} (set it to ${f.by === 'block' ? '0' : `at most ${genesisAt}`}, or leave it out)`,
        { found: when, genesis: genesisAt },
      );
    }
    if (f.runs === null) badGenesis(field, `Monsoon does not implement the fork ${f.key} names`);
    latest = f;
  }
  if (latest === undefined) return { chainId, fork: undefined };
  if (latest.runs === undefined || latest.runs === null) {
    return badGenesis(
      'config',
      `Monsoon needs London (EIP-1559, whose base fee it charges) or later, found forks only up to ${latest.key}`,
      { found: latest.key },
    );
  }
  let fork: Fork = latest.runs;
  const ttd = jsonNumber(config.terminalTotalDifficulty, 'config.terminalTotalDifficulty');
  if (fork === 'london' && ttd !== undefined && ttd <= genesis.difficulty) fork = 'paris';
  return { chainId, fork };
}

/** geth's CheckConfigForkOrder over the fork list (`at[i]`: when SCHEDULE[i] is active). */
function checkOrder(at: readonly (bigint | undefined)[]): void {
  let last = -1;
  SCHEDULE.forEach((cur, i) => {
    const when = at[i];
    if (last >= 0) {
      const prev = SCHEDULE[last]!;
      const prevAt = at[last];
      const unit = (f: ScheduledFork) => (f.by === 'block' ? 'block' : 'timestamp');
      const field = `config.${cur.key}`;
      if (prevAt === undefined && when !== undefined) {
        badGenesis(
          field,
          `unsupported fork ordering: ${prev.key} not enabled, but ${cur.key} enabled at ${unit(cur)} ${when}`,
        );
      }
      if (prevAt !== undefined && when !== undefined) {
        if (prev.by === cur.by && prevAt > when) {
          badGenesis(
            field,
            `unsupported fork ordering: ${prev.key} enabled at ${unit(prev)} ${prevAt}, but ${cur.key} enabled at ${unit(cur)} ${when}`,
          );
        }
        if (prev.by === 'time' && cur.by === 'block') {
          badGenesis(
            field,
            `unsupported fork ordering: ${prev.key} used timestamp ordering, but ${cur.key} reverted to block ordering`,
          );
        }
      }
    }
    if (cur.optional !== true || when !== undefined) last = i;
  });
}

/** geth's blob schedule rules: an entry per scheduled blob fork, each {target, max ≥ 0, baseFeeUpdateFraction ≠ 0}. */
function checkBlobSchedule(config: Record<string, unknown>): void {
  const schedule = jsonObject(config.blobSchedule, 'config.blobSchedule') ?? {};
  for (const [name, key] of BLOB_FORKS) {
    const field = `config.blobSchedule.${name}`;
    const entry = jsonObject(schedule[name], field);
    if (entry !== undefined) {
      const signed = (k: string) => {
        const v = entry[k];
        if (typeof v === 'number' && Number.isSafeInteger(v) && v < 0) {
          badGenesis(field, `invalid chain configuration in blobSchedule for fork "${name}": ${k} < 0`);
        }
        return jsonNumber(v, `${field}.${k}`);
      };
      signed('target');
      signed('max');
      const fraction = jsonNumber(entry.baseFeeUpdateFraction, `${field}.baseFeeUpdateFraction`, 64);
      if (fraction === undefined || fraction === 0n) {
        badGenesis(
          field,
          `invalid chain configuration in blobSchedule for fork "${name}": update fraction must be defined and non-zero`,
        );
      }
    }
    if (config[key] !== undefined && config[key] !== null && entry === undefined) {
      badGenesis(
        'config.blobSchedule',
        `invalid chain configuration: missing entry for fork "${name}" in blobSchedule`,
      );
    }
  }
}
