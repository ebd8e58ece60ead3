/**
 * The verbs half of the addon. Where it can't run (built without the headers, or no RDMA device:
 * this machine has neither a NIC nor Soft-RoCE) the device tests skip with the reason printed,
 * and what must hold everywhere is checked: requireRdma() names what is missing, and the verbs
 * calls throw typed errors instead of crashing.
 */
import { describe, expect, it } from '@jest/globals';
import { isRdmaError, loadNative, RdmaErrorCode, requireRdma, verbsInfo } from '@monsoon/rdma';

const info = verbsInfo();
const runnable = info.built && info.devices.length > 0;
if (!runnable)
  console.log(
    `verbs device tests skipped: ${info.built ? `no RDMA device (${info.reason ?? 'ibv_get_device_list lists none'})` : info.reason}`,
  );

describe('verbs', () => {
  it('requireRdma names what is missing, or passes where a device is present', () => {
    if (runnable) {
      expect(requireRdma().devices.length).toBeGreaterThan(0);
      return;
    }
    let err: unknown;
    try {
      requireRdma();
    } catch (e) {
      err = e;
    }
    expect(
      isRdmaError(err, RdmaErrorCode.NoDevice) ||
        isRdmaError(err, RdmaErrorCode.NoVerbs) ||
        isRdmaError(err, RdmaErrorCode.NotBuilt),
    ).toBe(true);
    expect((err as Error).message).toMatch(/RDMA device|verbs|addon/);
  });

  it('device calls fail typed where verbs or a device are missing', async () => {
    const b = loadNative().binding!;
    if (runnable) return;
    const code = info.built ? RdmaErrorCode.NoDevice : RdmaErrorCode.NoVerbs;
    await expect(Promise.resolve().then(() => b.openDevice(''))).rejects.toMatchObject({ code });
    expect(() => b.closeDevice(12345)).toThrow(
      expect.objectContaining({ code: info.built ? RdmaErrorCode.BadHandle : RdmaErrorCode.NoVerbs }),
    );
    expect(() => b.registerRegion(1, 1)).toThrow(
      expect.objectContaining({ code: info.built ? RdmaErrorCode.BadHandle : RdmaErrorCode.NoVerbs }),
    );
    const handle = { code: info.built ? RdmaErrorCode.BadHandle : RdmaErrorCode.NoVerbs };
    expect(() => b.createQueuePair(777)).toThrow(expect.objectContaining(handle));
    expect(() => b.connectQueuePair(777, { qpn: 1, lid: 1, gid: new Uint8Array(16), psn: 1 }, 1)).toThrow(
      expect.objectContaining(handle),
    );
    expect(() => b.readBatch(777, 1, 0n, 0, new Float64Array([0, 8, 0]))).toThrow(
      expect.objectContaining(handle),
    );
    expect(() => b.closeQueuePair(777)).toThrow(expect.objectContaining(handle));
  });

  (runnable ? it : it.skip)('opens a device and registers a mapped region for remote reads', async () => {
    const { SharedRegion } = await import('@monsoon/rdma');
    const { tempDir } = await import('@monsoon/test-utils');
    const { join } = await import('node:path');
    const d = await tempDir('monsoon-verbs-');
    const b = loadNative().binding!;
    const r = await SharedRegion.create(join(d.dir, 'v.region'), 1 << 20);
    const dev = await b.openDevice('');
    const mr = b.registerRegion(dev, r.handle);
    expect(mr.bytes).toBe(1 << 20);
    expect(mr.rkey).toBeGreaterThanOrEqual(0);
    // Loopback: a queue pair connected to itself READs the region into a second registered mapping.
    r.bytes.set([1, 2, 3, 4, 5, 6, 7, 8], 4096);
    const local = await SharedRegion.create(join(d.dir, 'l.region'), 1 << 16);
    b.registerRegion(dev, local.handle);
    const qp = b.createQueuePair(dev);
    b.connectQueuePair(qp.handle, qp, qp.psn);
    expect(await b.readBatch(qp.handle, local.handle, mr.addr, mr.rkey, new Float64Array([4096, 8, 0]))).toBe(
      1,
    );
    expect([...local.bytes.subarray(0, 8)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    b.closeQueuePair(qp.handle);
    local.close();
    b.closeDevice(dev);
    r.close();
    await d.remove();
  });
});
