#!/usr/bin/env node
/** Entry point of `monsoon miner` (`npm run miner -- --genesis g.json …`; also `monsoon node miner`). */
import { runMiner } from './minerCommand.js';

await runMiner(process.argv.slice(2));
