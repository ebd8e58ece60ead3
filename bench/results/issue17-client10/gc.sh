#!/bin/bash
# usage: gc.sh tag n dirA nameA dirB nameB : pathMicro with --trace-gc; scavenges, mark-compacts, and the JSON line
tag=$1; n=$2; dA=$3; nA=$4; dB=$5; nB=$6
for i in $(seq 1 $n); do
  for side in A B; do
    if [ $side = A ]; then dir=$dA; name=$nA; else dir=$dB; name=$nB; fi
    out=$(cd $dir && node --max-old-space-size=2000 --max-semi-space-size=1 --min-semi-space-size=1 --trace-gc bench/results/issue17-pipe8/pathMicro.mjs 2>&1)
    sc=$(echo "$out" | grep -c "Scavenge"); mc=$(echo "$out" | grep -c "Mark-Compact")
    gcms=$(echo "$out" | grep -oE "(Scavenge|Mark-Compact)[^,]*, [0-9.]+ / [0-9.]+ ms" | awk '{for(i=1;i<=NF;i++) if($i=="ms") s+=$(i-3)} END {printf "%.0f", s}')
    echo "$name scav=$sc mc=$mc gcms=$gcms $(echo "$out" | tail -1 | grep -oE '"clientUsPerTx":[0-9.]+|"bagNodesPerTx":[0-9.]+|"load1m":[0-9.]+' | tr '\n' ' ')" >> /tmp/client10-ab/$tag.log
  done
done
echo DONE >> /tmp/client10-ab/$tag.log
