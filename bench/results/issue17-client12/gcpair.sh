#!/bin/bash
# one e2e run with the clients' --trace-gc, client-0's log copied while it runs; $1 tag, $2 extra role flag (or none)
cd /work/wt/client12
extra="--role-flag client:--trace-gc"; [ "$2" != none ] && extra="$extra --role-flag client:$2"
l=$(cut -d' ' -f1 /proc/loadavg)
timeout 300 node scripts/bench.mjs e2e --accounts 100000 --duration 30 --baseline-txs 0 --disk-txs 0 --defaults-txs 0 $extra --out /tmp/c12-ab/gc-$1.json > /tmp/c12-ab/gc-$1.log 2>&1 &
sleep 20; d=$(ls -td /tmp/monsoon-bench-e2e-* | head -1)
while cp $d/logs/client-0.log /tmp/c12-ab/gc-$1-client0.log 2>/dev/null; do sleep 1; done
wait
python3 - "$1" "$l" <<'PY'
import re,sys,json
tag,load=sys.argv[1],sys.argv[2]
sc=[];mc=[];inc=0
for line in open(f'/tmp/c12-ab/gc-{tag}-client0.log'):
    m=re.search(r'(\d+) ms: (Scavenge|Mark-Compact)[^,]*, ([\d.]+) / [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms)?',line)
    if not m: continue
    (sc if m.group(2)=='Scavenge' else mc).append(float(m.group(3)))
    if m.group(2)!='Scavenge': inc+=float(m.group(4) or 0)
d=json.load(open(f'/tmp/c12-ab/gc-{tag}.json'))['monsoon']
print(tag,'load',load,'tx/s',round(d['committedPerSec']),'client ms/tx',d['cpuMsPerTx']['client'],'scavenges',len(sc),'scavenge ms',round(sum(sc)),'mark-compacts',len(mc),'mc ms',round(sum(mc)+inc))
PY
