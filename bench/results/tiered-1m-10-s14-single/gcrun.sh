#!/bin/bash
# $1: label, $2...: extra args. Warm-up of 300 skewed batches, measurement phases ~0; GC totals + process CPU.
label=$1; shift
/usr/bin/time -f "$label cpu_s=%U+%S maxrss_kb=%M" node --trace-gc --expose-gc --max-old-space-size=169 bench/dist/tiered.js --seconds 0.01 --warm-seconds 600 --warm-proofs 300000 --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 "$@" > /tmp/t10/gc-$label.txt 2>/tmp/t10/gc-$label.err
f=/tmp/t10/gc-$label.txt
echo "$label scav=$(grep -c Scavenge $f) mc=$(grep -c Mark-Compact $f) scav_ms=$(grep -o 'Scavenge[^,]*, [0-9.]* /' $f | awk '{s+=$(NF-1)} END {print s}') mc_ms=$(grep -o 'Mark-Compact[^,]*, [0-9.]* /' $f | awk '{s+=$(NF-1)} END {print s}') $(tail -1 /tmp/t10/gc-$label.err) warmS=$(tail -1 $f | grep -o '"warmS":[0-9.]*')"
