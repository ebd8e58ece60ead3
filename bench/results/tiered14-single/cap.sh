#!/bin/bash
# alternating: the bench's heap cap (169 MiB at 10% of 1M) / --max-old-space-size=2048
cd /work/wt/tiered14
for r in 1 2; do
  for v in cap169 cap2048; do
    cap=169; [ $v = cap2048 ] && cap=2048
    l0=$(cut -d' ' -f1 /proc/loadavg)
    MONSOON_BENCH_PHASES=1 timeout 600 node --trace-gc-nvp --expose-gc --max-old-space-size=$cap bench/dist/tiered.js --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 --seconds 3 --warm-seconds 20 --leveldb-copy > /tmp/tiered14-single/c-$v-$r.log 2>/tmp/tiered14-single/c-$v-$r.err
    l1=$(cut -d' ' -f1 /proc/loadavg)
    grep '^{' /tmp/tiered14-single/c-$v-$r.log | tail -1 > /tmp/tiered14-single/c-$v-$r.json
    python3 - $v $r $l0 $l1 <<'PY'
import json,sys
v,r,l0,l1=sys.argv[1:]
d=json.load(open(f'/tmp/tiered14-single/c-{v}-{r}.json'))
for k in ['skew90_10','uniform']:
  x=d[k]; c=x['cold']; s=c.get('slowest',{}) or {}
  print(v, r, 'load %s->%s'%(l0,l1), k, 'cold(%d) p50 %.3f p99 %.2f'%(c['reads'],c['p50Ms'],c['p99Ms']), 'slowest %.1f ms: rt %.1f gcIn %.1f cpu %.1f'%(s.get('ms',0),s.get('roundTripMs',0),s.get('gcInMs',0),s.get('cpuMs',0)), 'batch/s %.0f'%x['batchedProofsPerSec'], 'peakAnon %.0f MiB'%(d['peakRssAnonGrowthBytes']/2**20), flush=True)
PY
    python3 /tmp/tiered14-single/nvpsum.py /tmp/tiered14-single/c-$v-$r.log /tmp/tiered14-single/c-$v-$r.err | sed "s/^/   $v $r /"
  done
done
