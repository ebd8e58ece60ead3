// node bench/results/storage-s16/pruneMicro.mjs <repo root>  (A/B: run against two built trees in turn)
// VersionStore.add + prune per block over a 256-block window (64-version floor), as a storage node does.
import { join } from 'node:path'; import { pathToFileURL } from 'node:url';
const root = process.argv[2];
const sn = await import(pathToFileURL(join(root, 'packages/storage-node/dist/index.js')).href);
const { keccak } = await import(pathToFileURL(join(root, 'native/keccak/dist/index.js')).href);
const hex = (b) => Buffer.from(b).toString('hex');
const mk = (n, parent) => { const hash = keccak.keccak256(Uint8Array.of(n >> 16, (n >> 8) & 255, n & 255)); return { hash, id: hex(hash), header: { number: BigInt(n), parentHash: parent?.hash ?? new Uint8Array(32), difficulty: 0n }, headerRlp: new Uint8Array(0), totalDifficulty: 0n, state: {}, updates: 3000 }; };
let v = mk(0); const store = new sn.VersionStore(v, {});
const blocks = []; for (let n = 1; n <= 3000; n++) { v = mk(n, v); blocks.push(v); }
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const c = cpu(); for (const b of blocks) { store.add(b); store.prune(); }
console.log(JSON.stringify({ usPerBlock: +((cpu() - c) / blocks.length).toFixed(1), held: store.size }));
