// node bench/results/storage-s17/kbench.mjs <repo root>: keccak256Packed of 4,000 inputs of 110 and of 532 bytes (a leaf, a full branch), CPU per input, best of 5 (A/B: two built trees in turn).
const root = process.argv[2];
const { keccak } = await import(`${root}/native/keccak/dist/index.js`);
for (const len of [110, 532]) {
  const n = 4000;
  const data = new Uint8Array(n * len); for (let i = 0; i < data.length; i++) data[i] = i * 7;
  const off = new Uint32Array(n + 1); for (let i = 0; i <= n; i++) off[i] = i * len;
  const out = Buffer.alloc(32 * n);
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = process.cpuUsage();
    for (let k = 0; k < 40; k++) keccak.keccak256Packed(data, off, n, out);
    const c = process.cpuUsage(t); best = Math.min(best, (c.user + c.system) * 1000 / (40 * n));
  }
  process.stdout.write(`len ${len}: ${best.toFixed(0)} ns/msg  `);
}
console.log();
