#!/bin/bash
# alternating e2e pairs: $1 = tag, $2 = pairs
tag=$1; pairs=${2:-2}
for i in $(seq 1 $pairs); do
  for t in /work/wt/client12 /tmp/c12-main; do
    n=$(basename $t)
    out=/tmp/c12-ab/$tag-$n-$i.json
    l=$(cut -d' ' -f1 /proc/loadavg)
    (cd $t && timeout 300 node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 --out $out > /tmp/c12-ab/$tag-$n-$i.log 2>&1)
    python3 -c "
import json;d=json.load(open('$out'));m=d['monsoon'];c=m['cpuMsPerTx'];print('$n pair $i load $l', round(m['committedPerSec']), c, round(sum(c.values()),3))" >> /tmp/c12-ab/$tag.txt
    rm -f $t/bench/results/e2e.svg; (cd $t && git checkout -q bench/results/e2e.json 2>/dev/null)
  done
done
