#!/usr/bin/env node
/** Entry point of `monsoon storage` (`npm run storage -- --genesis g.json …`). */
import { runStorage } from './storageCommand.js';

await runStorage(process.argv.slice(2));
