/**
 * trimNativeHeap hands a fragmented malloc heap's free pages back: 64 MiB of buffers just under
 * glibc's mmap threshold come from the brk heap; freeing all but every eighth leaves holes that
 * free() keeps resident (the kept ones pin the heap's top), and one trim returns them.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { loadNative, trimNativeHeap } from '@monsoon/rdma';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Resident anonymous memory, MiB (/proc: glibc and Linux only). */
const rssAnonMiB = () =>
  Number(/RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN) / 1024;

const glibc =
  process.platform === 'linux' &&
  (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime !==
    undefined;

describe('trimNativeHeap', () => {
  it('is undefined without the addon, a promise of a boolean with it', async () => {
    const r = trimNativeHeap();
    if (loadNative().binding === undefined) expect(r).toBeUndefined();
    else expect(typeof (await r)).toBe('boolean');
  });

  (glibc && loadNative().binding !== undefined ? it : it.skip)(
    "gives back the pages of freed buffers held in the heap's middle",
    async () => {
      await trimNativeHeap();
      // What this process's other buffers hold (a Jest worker runs other files first).
      const inUse = () => process.memoryUsage().arrayBuffers / 2 ** 20;
      const base = inUse();
      let held: Buffer[] = [];
      for (let i = 0; i < 1024; i++) held.push(Buffer.allocUnsafeSlow(64 * 1024).fill(i));
      const kept = held.filter((_, i) => i % 8 === 7);
      held = [];
      // The backing stores are freed once the collector has swept them: wait for that, not a time
      // (the 8 MiB kept, plus slack for what the rest of the process frees or allocates meanwhile).
      const swept = () => inUse() <= base + 16;
      for (let i = 0; i < 200 && !swept(); i++) {
        gc();
        await new Promise((r) => setImmediate(r));
      }
      expect(inUse()).toBeLessThanOrEqual(base + 16);
      const before = rssAnonMiB();
      expect(await trimNativeHeap()).toBe(true);
      expect(before - rssAnonMiB()).toBeGreaterThan(32);
      expect(kept.every((b, i) => b[0] === (i * 8 + 7) % 256)).toBe(true);
    },
  );
});
