#!/bin/bash
# As run in session 18: scripts under /tmp/client18-tools (this folder holds copies), results under /tmp/client18-ab.
# run.sh <tree> <label> [extra bench args...]: one 30-s e2e; per client (s 20-40 of its life): CPU, GC, bytes allocated per accepted tx; in /tmp/client18-ab/<label>
tree=$1; label=$2; shift 2
out=/tmp/client18-ab/$label; mkdir -p $out
cd $tree && echo "$label start $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> /tmp/client18-ab/log.txt
node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 \
  --role-flag client:--require=/tmp/client18-tools/gcstat.cjs --role-env client:GC_DIR=$out --role-env client:GC_FROM_TXS=4000 --role-env client:GC_WINDOW_S=15 \
  "$@" --out $out/e2e.json > $out/bench.log 2>&1
node -e '
const fs=require("fs"); const d=process.argv[1]; const j=JSON.parse(fs.readFileSync(d+"/e2e.json")).monsoon;
const gcs=fs.readdirSync(d).filter(f=>f.startsWith("gc.")).map(f=>JSON.parse(fs.readFileSync(d+"/"+f)));
const g=gcs.map(x=>`acc ${x.accepted} cpu/tx ${(x.cpuMs/x.accepted).toFixed(3)}ms KB/tx ${(x.allocMiB*1024/x.accepted).toFixed(1)} minor ${x.gc.minor?.n}/${x.gc.minor?.ms.toFixed(0)}ms major ${(x.gc.major?.n??0)}/${(x.gc.major?.ms??0).toFixed(0)}ms`).join(" | ");
console.log(`${process.argv[2]}: ${j.committedPerSec.toFixed(0)} tx/s client ${j.cpuMsPerTx.client} miner ${j.cpuMsPerTx.miner} storage ${j.cpuMsPerTx.storage} driver ${j.cpuMsPerTx.driver} | ${g}`)' $out $label | tee -a /tmp/client18-ab/log.txt
echo "$label end $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> /tmp/client18-ab/log.txt
