// NodeBag merge cost: 200 submissions of 50 witnesses of 6 nodes (upper 2 shared), CPU us per witness merged; tree from argv[2]
const { NodeBag } = await import(`${process.argv[2]}/packages/dsm-tree/dist/index.js`);
const rnd = (n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = (Math.random() * 256) | 0; return b; };
const shared = Array.from({ length: 17 }, () => rnd(532));
const wit = Array.from({ length: 5000 }, () => { const w = new NodeBag(); w.addNodes([shared[0], shared[1 + ((Math.random() * 16) | 0)], rnd(532), rnd(400), rnd(300), rnd(110)]); return w; });
let sink = 0;
const run = () => { for (let s = 0; s < 100; s++) { const bag = new NodeBag(); for (let i = 0; i < 50; i++) sink += bag.mergeWhere(wit[(s * 50 + i) % wit.length], () => true); sink += bag.values().length; } };
for (let i = 0; i < 20; i++) run();
const t0 = process.cpuUsage(); for (let i = 0; i < 200; i++) run(); const c = process.cpuUsage(t0);
console.log(process.argv[2], ((c.user + c.system) / (200 * 100 * 50) * 1000).toFixed(1), 'ns per witness merged', sink > 0);
