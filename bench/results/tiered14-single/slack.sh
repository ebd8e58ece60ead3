#!/bin/bash
# alternating: this tree's store with its trim slack off (dist copied to ab-noslack, trimSlack -> 0) / on
cd "$(dirname "$0")"
for r in 1 2; do
  ./run1.sh t noslack $r "--max-old-space-size=169" --store-module packages/storage-node/dist/ab-noslack/index.js
  ./run1.sh t slack $r "--max-old-space-size=169"
done
