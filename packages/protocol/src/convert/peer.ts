/** Converters for the miners' Peer stream. */
import type { BlockWithReceipts, PeerBlock, PeerMessage } from '../domain/peer.js';
import type * as pb from '../generated/monsoon/miner/v1/miner.js';
import { consistent, fixed, missing, nonEmpty, nonEmptyList, uint32 } from './checks.js';
import { nodeBagFromProto, nodeBagToProto } from './common.js';

export function peerBlockToProto(b: PeerBlock, field = 'block'): pb.Block {
  return {
    headerRlp: nonEmpty(b.headerRlp, `${field}.headerRlp`),
    transactions: nonEmptyList(b.transactions, `${field}.transactions`),
    bag: nodeBagToProto(b.bag, `${field}.bag`),
  };
}

export function peerBlockFromProto(b: pb.Block, field = 'block'): PeerBlock {
  return {
    headerRlp: nonEmpty(b.headerRlp, `${field}.headerRlp`),
    transactions: nonEmptyList(b.transactions, `${field}.transactions`),
    bag: nodeBagFromProto(b.bag, `${field}.bag`),
  };
}

export function peerMessageToProto(m: PeerMessage): pb.PeerMessage {
  if (m.kind === 'getBlocks') {
    return {
      msg: {
        $case: 'getBlocks',
        value: { hash: fixed(m.hash, 32, 'getBlocks.hash'), count: uint32(m.count, 'getBlocks.count') },
      },
    };
  }
  return { msg: { $case: 'block', value: peerBlockToProto(m.block) } };
}

/**
 * A message with no `msg` (or one this version does not know, which decodes the same way) is
 * refused with MissingField; a peer edge may choose to skip it instead.
 */
export function peerMessageFromProto(m: pb.PeerMessage): PeerMessage {
  const msg = m.msg;
  if (msg === undefined) return missing('msg', 'a block or getBlocks');
  if (msg.$case === 'getBlocks') {
    return {
      kind: 'getBlocks',
      hash: fixed(msg.value.hash, 32, 'getBlocks.hash'),
      count: uint32(msg.value.count, 'getBlocks.count'),
    };
  }
  return { kind: 'block', block: peerBlockFromProto(msg.value) };
}

export function blockWithReceiptsToProto(b: BlockWithReceipts): pb.BlockWithReceipts {
  return blockWithReceipts(b);
}

/** Refuses an empty header or transaction, and a receipt count other than the transaction count. */
export function blockWithReceiptsFromProto(b: pb.BlockWithReceipts): BlockWithReceipts {
  return blockWithReceipts(b);
}

function blockWithReceipts(b: BlockWithReceipts): pb.BlockWithReceipts {
  consistent(
    b.receipts.length === b.transactions.length,
    'receipts',
    `one per transaction (${b.transactions.length})`,
    `${b.receipts.length}`,
  );
  return {
    headerRlp: nonEmpty(b.headerRlp, 'headerRlp'),
    transactions: nonEmptyList(b.transactions, 'transactions'),
    receipts: nonEmptyList(b.receipts, 'receipts'),
  };
}
