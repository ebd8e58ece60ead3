#!/bin/bash
cd /work/main
for i in 1 2; do
 for v in A B C; do
  extra=""
  [ $v = B ] && extra="--role-flag miner:--max-semi-space-size=64"
  [ $v = C ] && extra="--role-flag storage:--max-semi-space-size=64"
  echo "$v $i start $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/semi16/log
  node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 --out /tmp/semi16/$v$i.json $extra > /tmp/semi16/$v$i.log 2>&1
 done
done
