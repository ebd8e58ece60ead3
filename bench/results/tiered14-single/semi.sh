#!/bin/bash
# alternating: in-process default V8 young generation / --max-semi-space-size=2 (MiB)
cd "$(dirname "$0")"
for r in 1 2 3; do
  ./run1.sh s inproc $r "--max-old-space-size=169"
  ./run1.sh s semi2 $r "--max-semi-space-size=2 --max-old-space-size=169"
done
