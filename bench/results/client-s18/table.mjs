// node table.mjs runDir...: one markdown row per run (both clients' window figures averaged)
import { readFileSync, readdirSync } from 'node:fs';
const log = readFileSync('process.env.RUN_LOG ?? "runs/log.txt"', 'utf8');
console.log('| run | start (UTC), 1-min load | committed tx/s | client CPU ms/tx (e2e) | window CPU ms/tx | KB allocated/tx | scavenges, ms / 15 s | pre-exec fetch rounds/tx |');
console.log('|---|---|---|---|---|---|---|---|');
for (const d of process.argv.slice(2)) {
  const name = d.split('/').pop();
  const j = JSON.parse(readFileSync(`${d}/e2e.json`)).monsoon; const c = j.counters;
  const gs = readdirSync(d).filter((f) => f.startsWith('gc.')).map((f) => JSON.parse(readFileSync(`${d}/${f}`)));
  const acc = gs.reduce((a, g) => a + g.accepted, 0);
  const cpu = gs.reduce((a, g) => a + g.cpuMs, 0) / acc;
  const kb = gs.reduce((a, g) => a + g.allocMiB * 1024, 0) / acc;
  const sc = gs.map((g) => `${g.gc.minor?.n ?? 0}/${(g.gc.minor?.ms ?? 0).toFixed(0)}`).join(', ');
  const m = new RegExp(`^${name} start (\\S+) load average: ([0-9.]+)`, 'm').exec(log);
  const rounds = c['client/monsoon_client_fetch_rounds_sum'] / c['client/monsoon_client_fetch_rounds_count'];
  console.log(`| ${name} | ${m ? `${m[1]}, ${m[2]}` : '?'} | ${j.committedPerSec.toFixed(0)} | ${j.cpuMsPerTx.client} | ${cpu.toFixed(3)} | ${kb.toFixed(1)} | ${sc} | ${rounds.toFixed(3)} |`);
}
