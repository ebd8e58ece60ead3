#!/bin/bash
# alternating: the bench's heap cap (169 MiB at 10% of 1M) / --max-old-space-size=2048
cd "$(dirname "$0")"
for r in 1 2; do
  ./run1.sh c cap169 $r "--max-old-space-size=169"
  ./run1.sh c cap2048 $r "--max-old-space-size=2048"
done
