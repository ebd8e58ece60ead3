#!/bin/bash
# after the build: the bench sets TIERED_MALLOC_ENV itself; --default-malloc turns it off (env passes through)
cd /work/wt/malloc17
for round in 1 2 3; do
  for v in off both arena mmap; do
    case $v in
      off) E=""; F="--default-malloc";;
      both) E=""; F="";;
      arena) E="MALLOC_ARENA_MAX=2"; F="--default-malloc";;
      mmap) E="MALLOC_MMAP_THRESHOLD_=131072"; F="--default-malloc";;
    esac
    echo "$(date -u +%T) start $v r$round load: $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/malloc17-ab2/log
    env $E node scripts/bench.mjs tiered --accounts 1000000 --budgets 10 --skip-mpt --state-bytes-given 353798439 --state-nodes-given 1358859 --seconds 3 --warm-seconds 40 $F --out /tmp/malloc17-ab2/$v-r$round.json > /tmp/malloc17-ab2/$v-r$round.out 2>&1
    echo "$(date -u +%T) end $v r$round rc=$? load: $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/malloc17-ab2/log
  done
done
