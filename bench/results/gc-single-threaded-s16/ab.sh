#!/bin/bash
# A/B: default vs --single-threaded-gc in every role, 30 s e2e, alternating
cd /work/main
for i in 6 7; do
 for v in A B; do
  extra=""
  if [ $v = B ]; then extra="--role-flag client:--single-threaded-gc --role-flag miner:--single-threaded-gc --role-flag storage:--single-threaded-gc"; fi
  echo "$v $i start $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/gc16/log
  node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 --out /tmp/gc16/$v$i.json $extra > /tmp/gc16/$v$i.log 2>&1
  echo "$v $i end $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/gc16/log
 done
done
