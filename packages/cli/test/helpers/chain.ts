/** The chain a cluster's miner built, and its replay the conventional way, for the e2e tests. */
import { readFile } from 'node:fs/promises';
import { credentials } from '@grpc/grpc-js';
import { expect } from '@jest/globals';
import { toHex } from '@monsoon/dsm-tree';
import {
  type BlockHeader,
  blockWithReceiptsFromProto,
  decodeHeader,
  type Genesis,
  MinerServiceClient,
  parseGenesis,
} from '@monsoon/protocol';
import { ReferenceChain } from '@monsoon/workload';

/** A canonical block: its header and raw transactions. */
export interface ChainBlock {
  readonly header: BlockHeader;
  readonly transactions: Uint8Array[];
}

/** The canonical blocks from genesis up to the one that brings the chain's transactions to `count`. */
export function chainBlocks(miner: string, count: number): Promise<ChainBlock[]> {
  const client = new MinerServiceClient(miner, credentials.createInsecure());
  const blocks: ChainBlock[] = [];
  return new Promise((resolve, reject) => {
    const call = client.subscribeBlocks({ fromNumber: 0n });
    call.on('data', (m) => {
      const b = blockWithReceiptsFromProto(m);
      const header = decodeHeader(b.headerRlp);
      blocks.splice(Number(header.number));
      blocks.push({ header, transactions: [...b.transactions] });
      if (blocks.reduce((n, x) => n + x.transactions.length, 0) >= count) {
        call.cancel();
        client.close();
        resolve(blocks);
      }
    });
    call.on('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
  });
}

/**
 * Replays `blocks` (genesis first, skipped) the conventional way: @ethereumjs/vm over one full
 * @ethereumjs/mpt state from the cluster's genesis file, expecting every transaction included
 * and each block's state root and gas used. Resolves with the reference chain at the last block.
 */
export async function replayChain(
  genesisFile: string,
  blocks: readonly ChainBlock[],
): Promise<{ readonly genesis: Genesis; readonly reference: ReferenceChain; readonly included: number }> {
  const genesis = parseGenesis(JSON.parse(await readFile(genesisFile, 'utf8')));
  const reference = await ReferenceChain.create(genesis);
  let included = 0;
  for (const { header, transactions } of blocks.slice(1)) {
    const r = await reference.runBlock(
      {
        number: header.number,
        timestamp: header.timestamp,
        coinbase: header.miner,
        gasLimit: header.gasLimit,
      },
      transactions,
    );
    expect(r.outcomes).not.toContain('refused');
    expect(toHex(r.stateRoot)).toBe(toHex(header.stateRoot));
    expect(r.gasUsed).toBe(header.gasUsed);
    included += transactions.length;
  }
  return { genesis, reference, included };
}
