#!/bin/bash
# alternate: base (branch start, ab-base) / new: single reads and batches of the tiered side at 1M, 10%
cd /work/wt/tiered12
for r in 1 2; do
  for v in base new; do
    extra=""; [ $v = base ] && extra="--store-module packages/storage-node/dist/ab-base/index.js"
    l0=$(cut -d' ' -f1 /proc/loadavg)
    out=$(timeout 400 node --expose-gc --max-old-space-size=169 bench/dist/tiered.js --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 --seconds 3 --warm-seconds 30 $extra --leveldb-copy 2>/dev/null | grep '^{' | tail -1)
    echo "$out" > /tmp/tiered12-single/final-$v-$r.json
    python3 - "$v" "$r" "$l0" <<'PY'
import json,sys
d=json.load(open(f'/tmp/tiered12-single/final-{sys.argv[1]}-{sys.argv[2]}.json'))
for k in ['skew90_10','uniform']:
  x=d[k]; c=x['cold']; s=c.get('slowest',{}) or {}
  print(sys.argv[1], sys.argv[2], 'load', sys.argv[3], k, 'batch/s %.0f'%x['batchedProofsPerSec'], 'single p50 %.3f p99 %.3f'%(x['p50Ms'],x['p99Ms']), 'cold p50 %.3f p99 %.3f'%(c['p50Ms'],c['p99Ms']), 'slowest gc %.1f evict %.1f rt %.1f'%(s.get('gcMs',0),s.get('evictMs',0),s.get('roundTripMs',0)))
st=d['stats']; print('   stats evictMs %.0f evictMsMax %.1f prunes %d cacheMoved %s'%(st['evictMs'],st['evictMsMax'],st['prunes'],st.get('cacheMoved')))
print('   rss', {k: v for k, v in d.items() if 'rss' in k.lower() or 'heap' in k.lower()})
PY
  done
done
