#!/bin/bash
# One tiered child at 1M, 10% with the GC trace: run1.sh <prefix> <variant> <round> <node flags> [bench flags…]
# Writes /tmp/tiered14-single/<prefix>-<variant>-<round>.{log,err,json}; prints its cold reads and GCs.
cd /work/wt/tiered14
p=$1; v=$2; r=$3; nodeflags=$4; shift 4
out=/tmp/tiered14-single/$p-$v-$r
l0=$(cut -d' ' -f1 /proc/loadavg)
MONSOON_BENCH_PHASES=1 timeout 600 node $nodeflags --trace-gc-nvp --expose-gc bench/dist/tiered.js --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 --seconds 3 --warm-seconds 20 --leveldb-copy "$@" > $out.log 2>$out.err
l1=$(cut -d' ' -f1 /proc/loadavg)
grep '^{' $out.log | tail -1 > $out.json
python3 - $out.json $v $r $l0 $l1 <<'PY'
import json,sys
f,v,r,l0,l1=sys.argv[1:]
d=json.load(open(f))
for k in ['skew90_10','uniform']:
  x=d[k]; c=x['cold']; s=c.get('slowest',{}) or {}
  print(v, r, 'load %s->%s'%(l0,l1), k, 'cold(%d) p50 %.3f p99 %.2f'%(c['reads'],c['p50Ms'],c['p99Ms']), 'slowest %.1f ms: rt %.1f gcIn %.1f cpu %.1f'%(s.get('ms',0),s.get('roundTripMs',0),s.get('gcInMs',0),s.get('cpuMs',0)), 'batch/s %.0f'%x['batchedProofsPerSec'], 'peakAnon %.0f MiB'%(d['peakRssAnonGrowthBytes']/2**20), flush=True)
PY
python3 /work/wt/tiered14/bench/results/tiered14-single/nvpsum.py $out.log $out.err | sed "s/^/   $v $r /"
