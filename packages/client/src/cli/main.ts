#!/usr/bin/env node
/** Entry point of `monsoon client` (`npm run client -- --genesis g.json …`; also `monsoon node client`). */
import { runClient } from './clientCommand.js';

await runClient(process.argv.slice(2));
