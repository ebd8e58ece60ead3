#!/bin/bash
# alternating: in-process / --max-semi-space-size=4 / LevelDB role, getMany on its thread pool (remote0) or
# <= 32 keys on its own thread (remote32: the role's --sync-get-keys, reverted since)
cd "$(dirname "$0")"
for r in 1 2 3; do
  ./run1.sh ab inproc $r "--max-old-space-size=169"
  ./run1.sh ab semi4 $r "--max-semi-space-size=4 --max-old-space-size=169"
  ./run1.sh ab remote0 $r "--max-old-space-size=169" --remote-leveldb --leveldb-sync-get-keys 0
  ./run1.sh ab remote32 $r "--max-old-space-size=169" --remote-leveldb --leveldb-sync-get-keys 32
done
