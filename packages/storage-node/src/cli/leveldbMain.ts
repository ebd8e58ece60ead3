#!/usr/bin/env node
/** Entry point of `monsoon node leveldb` (`npm run leveldb -- --listen 127.0.0.1:7000 --dir data/leveldb`). */
import { runLeveldb } from './leveldbCommand.js';

await runLeveldb(process.argv.slice(2));
