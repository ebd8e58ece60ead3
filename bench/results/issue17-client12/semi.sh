#!/bin/bash
tag=$1; pairs=${2:-2}; flag=$3
cd /work/wt/client12
for i in $(seq 1 $pairs); do
  for v in base flag; do
    out=/tmp/c12-ab/$tag-$v-$i.json
    l=$(cut -d' ' -f1 /proc/loadavg)
    extra=""; [ $v = flag ] && extra="--role-flag client:$flag"
    timeout 300 node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 $extra --out $out > /tmp/c12-ab/$tag-$v-$i.log 2>&1
    python3 -c "
import json;d=json.load(open('$out'));m=d['monsoon'];c=m['cpuMsPerTx'];print('$v pair $i load $l', round(m['committedPerSec']), c, round(sum(c.values()),3))" >> /tmp/c12-ab/$tag.txt
  done
done
