#!/bin/bash
# alternating: in-process default V8 young generation / --max-semi-space-size=2 (MiB)
cd /work/wt/tiered14
for r in 1 2 3; do
  for v in inproc semi2; do
    nodeflags=""
    [ $v = semi2 ] && nodeflags="--max-semi-space-size=2"
    l0=$(cut -d' ' -f1 /proc/loadavg)
    MONSOON_BENCH_PHASES=1 timeout 600 node $nodeflags --trace-gc-nvp --expose-gc --max-old-space-size=169 bench/dist/tiered.js --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 --seconds 3 --warm-seconds 20 --leveldb-copy > /tmp/tiered14-single/s-$v-$r.log 2>/tmp/tiered14-single/s-$v-$r.err
    l1=$(cut -d' ' -f1 /proc/loadavg)
    grep '^{' /tmp/tiered14-single/s-$v-$r.log | tail -1 > /tmp/tiered14-single/s-$v-$r.json
    python3 - $v $r $l0 $l1 <<'PY'
import json,sys
v,r,l0,l1=sys.argv[1:]
d=json.load(open(f'/tmp/tiered14-single/s-{v}-{r}.json'))
for k in ['skew90_10','uniform']:
  x=d[k]; c=x['cold']; s=c.get('slowest',{}) or {}
  print(v, r, 'load %s->%s'%(l0,l1), k, 'cold(%d) p50 %.3f p99 %.2f'%(c['reads'],c['p50Ms'],c['p99Ms']), 'slowest %.1f ms: rt %.1f gcIn %.1f cpu %.1f'%(s.get('ms',0),s.get('roundTripMs',0),s.get('gcInMs',0),s.get('cpuMs',0)), 'batch/s %.0f'%x['batchedProofsPerSec'], 'peakAnon %.0f MiB'%(d['peakRssAnonGrowthBytes']/2**20), flush=True)
PY
    python3 /tmp/tiered14-single/nvpsum.py /tmp/tiered14-single/s-$v-$r.log /tmp/tiered14-single/s-$v-$r.err | sed "s/^/   $v $r /"
  done
done
