/** A receipt as geth's `eth_getTransactionReceipt` writes it, logs numbered block-wide. */
import { logsBloom } from '@monsoon/execution';
import type { ReceiptView } from './backend.js';
import { hexData, type JsonObject, quantity } from './json.js';
import { logJson } from './logJson.js';

export function receiptJson(r: ReceiptView): JsonObject {
  const blockHash = hexData(r.blockHash);
  const blockNumber = quantity(r.blockNumber);
  const transactionHash = hexData(r.transactionHash);
  const transactionIndex = quantity(r.index);
  return {
    blockHash,
    blockNumber,
    contractAddress: r.contractAddress === undefined ? null : hexData(r.contractAddress),
    cumulativeGasUsed: quantity(r.cumulativeGasUsed),
    effectiveGasPrice: quantity(r.effectiveGasPrice),
    from: hexData(r.from),
    gasUsed: quantity(r.gasUsed),
    logs: r.logs.map((log, i) =>
      logJson(log, {
        blockNumber: r.blockNumber,
        blockHash: r.blockHash,
        transactionHash: r.transactionHash,
        transactionIndex: r.index,
        logIndex: r.firstLogIndex + i,
      }),
    ),
    logsBloom: hexData(logsBloom(r.logs)),
    status: quantity(r.status),
    to: r.to === undefined ? null : hexData(r.to),
    transactionHash,
    transactionIndex,
    type: quantity(r.type),
  };
}
