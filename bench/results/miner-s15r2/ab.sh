#!/bin/bash
# usage: m13-ab.sh kind pairs  -- alternates dsm-tree dist A/B in separate processes, --pass <kind> --rounds 3
cd /work/wt/miner13
kind=$1; pairs=$2
for i in $(seq 1 $pairs); do
  for s in A B; do
    if [ $i -ge 2 ] || true; then :; fi
    order=$s
    rm -rf packages/execution/dist; cp -r /tmp/m13-ex-$order packages/execution/dist
    echo "== $order $(uptime | sed 's/.*load/load/')"
    (ulimit -v 12000000; node --expose-gc --max-old-space-size=6000 bench/dist/miner.js --pass $kind --rounds 3 --plans /tmp/m13-plans-$kind.json --engines revm 2>&1 | grep "pass [12]:" | sed 's/ |/ |/; s/, root.*//')
  done
done
rm -rf packages/execution/dist; cp -r /tmp/m13-ex-B packages/execution/dist
