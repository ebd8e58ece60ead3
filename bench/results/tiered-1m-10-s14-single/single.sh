#!/bin/bash
label=$1; shift
node --expose-gc --max-old-space-size=169 bench/dist/tiered.js --seconds 3 --warm-seconds 40 --side tiered --n 1000000 --budget-pct 10 --state-bytes 353798439 "$@" 2>/dev/null | tail -1 > /tmp/t10/single-$label.json
node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1]));const f=(r)=>`cold p50 ${r.cold.p50Ms.toFixed(2)} p99 ${r.cold.p99Ms.toFixed(2)} (slowest: rt ${r.cold.slowest.roundTripMs.toFixed(1)} gc ${r.cold.slowest.gcMs.toFixed(1)} ev ${r.cold.slowest.evictMs.toFixed(2)}) batch ${r.batchedProofsPerSec.toFixed(0)}/s`;console.log(process.argv[2], "skew", f(o.skew90_10), "| uniform", f(o.uniform), "| load", require("os").loadavg()[0].toFixed(1))' /tmp/t10/single-$label.json $label
