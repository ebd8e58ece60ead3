/** Converters for ConnectRdma: every number in its range, a GID of 16 bytes, nothing missing. */
import type { ConnectRdmaRequest, ConnectRdmaResponse, RdmaEndpoint } from '../domain/rdma.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import { ProtocolErrorCode } from '../protocolError.js';
import { fail, fixed, missing, uint32, uint64, uintInRange } from './checks.js';

export const GID_LENGTH = 16;
const MAX_24 = 0xff_ffff;

function endpoint(e: pb.RdmaEndpoint | RdmaEndpoint | undefined, field: string): RdmaEndpoint {
  if (e === undefined) return missing(field, 'an RDMA endpoint (qpn, lid, gid, psn)');
  const qpn = uintInRange(e.qpn, MAX_24, `${field}.qpn`, 'a 24-bit queue pair number');
  if (qpn === 0) fail(ProtocolErrorCode.BadQuantity, `${field}.qpn`, 'a queue pair number other than 0', '0');
  return {
    qpn,
    lid: uintInRange(e.lid, 0xffff, `${field}.lid`, 'a 16-bit local identifier'),
    gid: fixed(e.gid, GID_LENGTH, `${field}.gid`),
    psn: uintInRange(e.psn, MAX_24, `${field}.psn`, 'a 24-bit packet sequence number'),
  };
}

/** The request checked (the same both ways: the domain and wire shapes coincide). */
function request(r: ConnectRdmaRequest | pb.ConnectRdmaRequest): ConnectRdmaRequest {
  return { client: endpoint(r.client, 'client') };
}

function response(r: ConnectRdmaResponse | pb.ConnectRdmaResponse): ConnectRdmaResponse {
  return {
    server: endpoint(r.server, 'server'),
    regionAddr: uint64(r.regionAddr, 'regionAddr'),
    rkey: uint32(r.rkey, 'rkey'),
    regionBytes: uint64(r.regionBytes, 'regionBytes'),
    generation: uint64(r.generation, 'generation'),
  };
}

export const connectRdmaRequestToProto: (r: ConnectRdmaRequest) => pb.ConnectRdmaRequest = request;
export const connectRdmaRequestFromProto: (r: pb.ConnectRdmaRequest) => ConnectRdmaRequest = request;
export const connectRdmaResponseToProto: (r: ConnectRdmaResponse) => pb.ConnectRdmaResponse = response;
export const connectRdmaResponseFromProto: (r: pb.ConnectRdmaResponse) => ConnectRdmaResponse = response;
