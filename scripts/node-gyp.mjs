/**
 * `node-gyp rebuild` for our C++ addons (run from the addon's directory by its `build` script),
 * against the headers of the Node that runs it, with nothing downloaded when they are on disk:
 * `npm_config_nodedir` / `MONSOON_NODEDIR` when set, else the running Node's own prefix when it
 * ships its headers (`<prefix>/include/node/node_api.h`: Debian's nodejs under /usr, the official
 * tarballs and images under /usr/local, nvm under ~/.nvm/versions/…), else node-gyp's default
 * (its header cache, downloading them once).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const prefix = dirname(dirname(process.execPath));
const nodedir =
  process.env.npm_config_nodedir ||
  process.env.MONSOON_NODEDIR ||
  (existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined);
const gyp = createRequire(join(process.cwd(), 'package.json')).resolve('node-gyp/bin/node-gyp.js');
const args = [gyp, 'rebuild', '--loglevel=warn', ...(nodedir ? [`--nodedir=${nodedir}`] : [])];
const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(run.status ?? 1);
