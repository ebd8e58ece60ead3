#!/bin/bash
# one tiered child at 1M, 10%: $1 = label, rest = extra flags
cd /work/wt/tiered14
label=$1; shift
l0=$(cut -d' ' -f1 /proc/loadavg)
out=$(timeout 600 node --expose-gc --max-old-space-size=169 bench/dist/tiered.js --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 --seconds 3 --warm-seconds 30 --leveldb-copy "$@" 2>/tmp/tiered14-single/$label.err | grep '^{' | tail -1)
l1=$(cut -d' ' -f1 /proc/loadavg)
echo "$out" > /tmp/tiered14-single/$label.json
python3 - "$label" "$l0" "$l1" <<'PY'
import json,sys
d=json.load(open(f'/tmp/tiered14-single/{sys.argv[1]}.json'))
for k in ['skew90_10','uniform']:
  x=d[k]; c=x['cold']; s=c.get('slowest',{}) or {}
  print(sys.argv[1], 'load', sys.argv[2], '->', sys.argv[3], k, 'single p50 %.3f p99 %.3f'%(x['p50Ms'],x['p99Ms']), 'cold(%d) p50 %.3f p99 %.3f'%(c['reads'],c['p50Ms'],c['p99Ms']), 'slowest(%d) %.2f ms: rt %.2f evict %.2f gc~ %.2f gcIn %.2f cpu %.2f keys %.1f trips %.2f'%(s.get('reads',0),s.get('ms',0),s.get('roundTripMs',0),s.get('evictMs',0),s.get('gcMs',0),s.get('gcInMs',0),s.get('cpuMs',0),s.get('keys',0),s.get('trips',0)))
PY
