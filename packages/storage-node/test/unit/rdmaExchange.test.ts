/**
 * ConnectRdma, the queue-pair exchange, against a real server on 127.0.0.1:0, where no RDMA
 * device is needed: a request with a malformed endpoint (a GID not 16 bytes, a queue pair number
 * 0 or wider than 24 bits, no endpoint at all) is refused with INVALID_ARGUMENT naming the field,
 * before anything else; a well-formed one to a node that serves no region over RDMA is
 * FAILED_PRECONDITION. Registering a region with a device refuses a region that is not a file,
 * and here (no device) names what is missing. Where a device exists, a connection is made and its
 * numbers and region keys are checked (skipped with the reason elsewhere).
 */
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ConnectRdmaRequest, connectRdmaResponseFromProto } from '@monsoon/protocol';
import { loadNative, verbsInfo } from '@monsoon/rdma';
import { RdmaExport, RegionExport, StorageNode, StorageServer } from '@monsoon/storage-node';
import { tempDir } from '@monsoon/test-utils';
import { makeGenesis } from '../helpers/chain.js';
import { errorCodeOf, expectStatus, storageClient, unary } from '../helpers/grpcClient.js';

const endpoint = (over: Partial<ConnectRdmaRequest['client']> = {}) => ({
  client: { qpn: 17, lid: 0, gid: new Uint8Array(16), psn: 5, ...over },
});

describe('ConnectRdma', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  let node: StorageNode;
  let server: StorageServer;
  let client: ReturnType<typeof storageClient>;

  beforeAll(async () => {
    dir = await tempDir('monsoon-rdma-x-');
    node = StorageNode.fromGenesis(makeGenesis(5, 20), {});
    server = await StorageServer.create({ listen: '127.0.0.1:0' }, { node });
    client = storageClient(server.address());
  });

  afterAll(async () => {
    client.close();
    await server.close();
    await node.close();
    await dir.remove();
  });

  it('refuses malformed endpoints with INVALID_ARGUMENT naming the field', async () => {
    const call = (r: unknown) => unary(client, client.connectRdma, r as never);
    const cases: [unknown, RegExp][] = [
      [endpoint({ gid: new Uint8Array(15) }), /^BAD_LENGTH: client\.gid: expected 16 bytes, found 15$/],
      [endpoint({ qpn: 0 }), /^BAD_QUANTITY: client\.qpn: expected a queue pair number other than 0/],
      [endpoint({ qpn: 1 << 24 }), /^BAD_QUANTITY: client\.qpn: expected a 24-bit queue pair number/],
      [endpoint({ lid: 1 << 16 }), /^BAD_QUANTITY: client\.lid: expected a 16-bit local identifier/],
      [endpoint({ psn: 1 << 24 }), /^BAD_QUANTITY: client\.psn: expected a 24-bit packet sequence number/],
      [{}, /^MISSING_FIELD: client: expected an RDMA endpoint/],
    ];
    for (const [req, details] of cases) await expectStatus(call(req), status.INVALID_ARGUMENT, details);
  });

  it('a well-formed request to a node without RDMA is FAILED_PRECONDITION (NO_RDMA)', async () => {
    const e = await expectStatus(
      unary(client, client.connectRdma, endpoint()),
      status.FAILED_PRECONDITION,
      /does not export its region over RDMA.*--rdma-device/,
    );
    expect(errorCodeOf(e)).toBe('NO_RDMA');
  });

  it('registering needs a region file, then verbs and a device (named when missing)', async () => {
    const inMemory = await RegionExport.create({ nodes: 100, arenaBytes: 1 << 16 });
    await expect(RdmaExport.open({ device: 'rxe0' }, inMemory)).rejects.toThrow(
      /--rdma-device rxe0: the region must be a file.*--export-region/,
    );
    const file = await RegionExport.create({
      path: join(dir.dir, 'r.region'),
      nodes: 100,
      arenaBytes: 1 << 16,
    });
    // No device by that name anywhere: here no device at all (or no verbs in the build).
    await expect(RdmaExport.open({ device: 'no-such-dev0' }, file)).rejects.toThrow(
      /--rdma-device no-such-dev0: .*(RDMA device|verbs|not built)/,
    );
    expect(loadNative().binding!.mappings()).toBe(1); // the region's own mapping, nothing leaked
    await file.close();
    await inMemory.close();
  });

  it('connects a queue pair where a device exists', async () => {
    const info = verbsInfo();
    if (info.devices.length === 0) {
      console.log(`rdma exchange with a device skipped: ${info.reason ?? 'no RDMA device'}`);
      return;
    }
    const region = await RegionExport.create({
      path: join(dir.dir, 'd.region'),
      nodes: 100,
      arenaBytes: 1 << 16,
    });
    const rdma = await RdmaExport.open({ device: info.devices[0]! }, region);
    const s = await StorageServer.create({ listen: '127.0.0.1:0' }, { node, rdma });
    const c = storageClient(s.address());
    const b = loadNative().binding!;
    const dev = await b.openDevice(info.devices[0]!);
    const qp = b.createQueuePair(dev);
    const res = connectRdmaResponseFromProto(
      await unary(c, c.connectRdma, { client: { qpn: qp.qpn, lid: qp.lid, gid: qp.gid, psn: qp.psn } }),
    );
    expect(res.server.qpn).toBeGreaterThan(0);
    expect(res.regionBytes).toBe(BigInt(region.writer.geometry.totalBytes));
    expect(res.generation).toBe(region.writer.geometry.generation);
    b.closeDevice(dev);
    c.close();
    await s.close();
    rdma.close();
    await region.close();
  });
});
