#!/bin/bash
cd /work/main
for i in 1 2; do
 for v in A B; do
  extra=""
  [ $v = B ] && extra="--topology /tmp/rt16/rt1.json"
  echo "$v $i start $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/rt16/log
  node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 --out /tmp/rt16/$v$i.json $extra > /tmp/rt16/$v$i.log 2>&1
 done
done
