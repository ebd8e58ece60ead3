/**
 * `workload [run] --clients a,b --miner m (--rate R | --concurrency C) (--duration 60s | --count N)`:
 * loads (or derives and caches) the accounts the genesis funded, drives the traffic mix through
 * the clients, and writes result.json, summary.md and chart.svg to `--out`, printing the
 * summary. Ctrl-C ends the run phase early (the drain and the reports follow); a second Ctrl-C
 * ends the drain.
 */
import { parseArgs } from 'node:util';
import { AccountSet } from '../accounts.js';
import { LoadDriver, type LoadShape, type RunLength } from '../driver/loadDriver.js';
import { ttyLoadProgress } from '../driver/loadProgressLine.js';
import { summaryMarkdown } from '../driver/summaryMarkdown.js';
import { writeReport } from '../driver/writeReport.js';
import type { TrafficOptions } from '../traffic.js';
import { TrafficGenerator } from '../traffic.js';
import { ttyProgress } from '../ttyProgress.js';
import {
  parseChainId,
  parseCount,
  parseDuration,
  parseList,
  parsePositive,
  parseShare,
  UsageError,
} from './args.js';
import { CLI_DEFAULTS, seedBytes } from './cliDefaults.js';

export const RUN_USAGE = `usage: npm run workload -- [run] --clients <list> --miner <host:port> [options]
  --clients <list>        clients: host:port (gRPC, the bulk path) or http://host:port (JSON-RPC), comma-separated
  --miner <host:port>     a miner to watch canonical blocks on (inclusion and latency)
  --metrics <list>        the clients' /metrics (host:port or URL), for witness bytes per transaction
  --accounts <n>          accounts, as the genesis was written with (default ${CLI_DEFAULTS.accounts})
  --seed <text>           account seed, as the genesis was written with (default "${CLI_DEFAULTS.seed}")
  --cache-dir <dir>       account cache (default ${CLI_DEFAULTS.cacheDir})
  --rate <tx/s>           open loop: send at this rate whatever happens
  --concurrency <n>       closed loop: keep n transactions in flight (default ${CLI_DEFAULTS.concurrency})
  --duration <time>       run phase length: 60s, 500ms, 2m (default ${CLI_DEFAULTS.duration})
  --count <n>             or: generate n transactions
  --drain-timeout <time>  longest wait for in-flight transactions after the run (default ${CLI_DEFAULTS.drainTimeout})
  --batch-interval <time> how often batches go out (default 5ms)
  --max-batch <n>         most transactions per call (default 500)
  --traffic-seed <text>   seed of the traffic mix (default "monsoon-traffic")
  --hot-fraction <share>  share of accounts in the hot set (default 0.1)
  --hot-share <share>     share of transactions the hot set sends and receives (default 0.9)
  --erc20-share <share>   share of ERC-20 transfers (default 0.15)
  --tx-type <type>        eip1559 | legacy (default eip1559)
  --chain-id <id>         chain id the genesis used (default 1337)
  --out <dir>             where result.json, summary.md and chart.svg go (default ${CLI_DEFAULTS.out})`;

const OPTIONS = {
  clients: { type: 'string' },
  miner: { type: 'string' },
  metrics: { type: 'string' },
  accounts: { type: 'string' },
  seed: { type: 'string', default: CLI_DEFAULTS.seed },
  'cache-dir': { type: 'string', default: CLI_DEFAULTS.cacheDir },
  rate: { type: 'string' },
  concurrency: { type: 'string' },
  duration: { type: 'string' },
  count: { type: 'string' },
  'drain-timeout': { type: 'string', default: CLI_DEFAULTS.drainTimeout },
  'batch-interval': { type: 'string' },
  'max-batch': { type: 'string' },
  'traffic-seed': { type: 'string' },
  'hot-fraction': { type: 'string' },
  'hot-share': { type: 'string' },
  'erc20-share': { type: 'string' },
  'tx-type': { type: 'string' },
  'chain-id': { type: 'string' },
  out: { type: 'string', default: CLI_DEFAULTS.out },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * Runs the load command on `args`; resolves with the exit status: 1 when nothing was committed or
 * the run gave up (calls failing, everything refused).
 */
export async function runCommand(args: readonly string[]): Promise<number> {
  const { values: v } = parseArgs({ args: [...args], strict: true, options: OPTIONS });
  if (v.help) {
    process.stdout.write(`${RUN_USAGE}\n`);
    return 0;
  }
  if (v.clients === undefined)
    throw new UsageError('--clients: required (host:port,… or http://host:port,…)');
  if (v.miner === undefined) throw new UsageError('--miner: required (host:port)');
  if (v.rate !== undefined && v.concurrency !== undefined)
    throw new UsageError('--rate and --concurrency: expected one of them (open or closed loop), found both');
  if (v.duration !== undefined && v.count !== undefined)
    throw new UsageError('--duration and --count: expected one of them, found both');
  const load: LoadShape =
    v.rate !== undefined
      ? { rate: parsePositive('--rate', v.rate) }
      : {
          concurrency:
            v.concurrency === undefined
              ? CLI_DEFAULTS.concurrency
              : parseCount('--concurrency', v.concurrency),
        };
  const until: RunLength =
    v.count !== undefined
      ? { count: parseCount('--count', v.count) }
      : { durationMs: parseDuration('--duration', v.duration ?? CLI_DEFAULTS.duration) };
  const count = v.accounts === undefined ? CLI_DEFAULTS.accounts : parseCount('--accounts', v.accounts);
  const txType = v['tx-type'];
  if (txType !== undefined && txType !== 'eip1559' && txType !== 'legacy')
    throw new UsageError(`--tx-type: expected eip1559 or legacy, found "${txType}"`);
  const traffic: Partial<TrafficOptions> = {
    ...(v['traffic-seed'] === undefined ? {} : { seed: seedBytes(v['traffic-seed']) }),
    ...(v['hot-fraction'] === undefined
      ? {}
      : { hotFraction: parseShare('--hot-fraction', v['hot-fraction']) }),
    ...(v['hot-share'] === undefined ? {} : { hotShare: parseShare('--hot-share', v['hot-share']) }),
    ...(v['erc20-share'] === undefined ? {} : { erc20Share: parseShare('--erc20-share', v['erc20-share']) }),
    ...(v['chain-id'] === undefined ? {} : { chainId: parseChainId('--chain-id', v['chain-id']) }),
    ...(txType === undefined ? {} : { txType }),
  };
  const clients = parseList('--clients', v.clients);
  const metrics = v.metrics === undefined ? [] : parseList('--metrics', v.metrics);

  const accounts = await AccountSet.create({
    seed: seedBytes(v.seed),
    count,
    cacheDir: v['cache-dir'],
    onProgress: ttyProgress('accounts'),
  });
  const generator = new TrafficGenerator(traffic, { accounts });
  const progress = ttyLoadProgress();
  const driver = await LoadDriver.create(
    {
      clients,
      miner: v.miner,
      metrics,
      load,
      until,
      drainTimeoutMs: parseDuration('--drain-timeout', v['drain-timeout']),
      ...(v['batch-interval'] === undefined
        ? {}
        : { batchIntervalMs: parseDuration('--batch-interval', v['batch-interval']) }),
      ...(v['max-batch'] === undefined ? {} : { maxBatch: parseCount('--max-batch', v['max-batch']) }),
      meta: { seed: v.seed, accountCache: accounts.cacheStatus },
    },
    {
      traffic: generator,
      accounts,
      ...(progress === undefined ? {} : { onProgress: (p) => progress.update(p) }),
    },
  );
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    process.stderr.write(
      interrupts === 1
        ? '\nstopping: draining in-flight transactions (Ctrl-C again to stop waiting)\n'
        : '\nstopping the drain\n',
    );
    driver.stop();
  };
  process.on('SIGINT', onSigint);
  let result: Awaited<ReturnType<LoadDriver['run']>>;
  try {
    result = await driver.run();
  } finally {
    process.off('SIGINT', onSigint);
    progress?.end();
  }
  const files = await writeReport(v.out, result);
  process.stdout.write(`${summaryMarkdown(result)}\n`);
  process.stderr.write(`wrote ${files.json}, ${files.markdown}, ${files.svg}\n`);
  const nonceTooLow = result.reasons.some((g) => g.samples.some((x) => x.reason.includes('nonce too low')));
  if (nonceTooLow) {
    process.stderr.write(
      'hint: "nonce too low" means the chain already holds transactions of these accounts; the generator\n' +
        'starts every account at the genesis nonce 0, so run against a freshly started cluster (npm run cluster wipes its data)\n',
    );
  }
  const failed = result.timing.stoppedBy === 'call-failures' || result.timing.stoppedBy === 'refusals';
  return result.counts.committed > 0 && !failed ? 0 : 1;
}
