#!/bin/bash
# usage: ab.sh <tag> <pairs>
tag=$1; n=$2
for i in $(seq 1 $n); do
  for side in new main; do
    if [ $side = new ]; then dir=/tmp/client10-new; else dir=/tmp/client10-main; fi
    echo "== $tag $side $i $(date -u +%T) $(uptime | sed 's/.*load average/load/')" >> /tmp/client10-ab/$tag.log
    (cd $dir && node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 $EXTRA --out /tmp/client10-ab/$tag-$side-$i.json 2>&1 | grep -a "monsoon:" >> /tmp/client10-ab/$tag.log)
  done
done
echo DONE >> /tmp/client10-ab/$tag.log
