/**
 * geth's FilterCriteria (eth_getLogs, eth_newFilter, eth_subscribe "logs") from JSON, refused
 * with geth's messages (its `FilterCriteria.UnmarshalJSON`): `blockHash` or a
 * `fromBlock`/`toBlock` range, `address` as one address or a list, `topics` as positions that are
 * null (any), a topic, or a list of topics (any of them; a null in the list makes it any).
 */
import type { BlockTag } from './backend.js';
import type { LogFilter } from './chainEvents.js';
import {
  ArgError,
  blockNumberArg,
  type Decoder,
  field,
  hashArg,
  hexutilDecode,
  jsonKind,
  objectArg,
} from './params.js';

/** The most topic positions a filter may have (LOG4's four). */
export const MAX_TOPICS = 4;
/** The most topics one position may list (geth's maxSubTopics). */
export const MAX_SUB_TOPICS = 1000;

/** A decoded filter: which logs, and from which blocks (a hash, or a range; absent ends are `latest`). */
export interface FilterCriteria extends LogFilter {
  readonly blockHash?: Uint8Array;
  readonly fromBlock?: BlockTag;
  readonly toBlock?: BlockTag;
}

const STRUCT = 'input';

/** hexutil.Decode of a fixed-length value, with the length error geth's decodeAddress / decodeTopic give. */
function decodeFixed(s: string, bytes: number, what: string): Uint8Array {
  const b = hexutilDecode(s);
  if (b.length !== bytes) {
    throw new ArgError(`hex has invalid length ${b.length} after decoding; expected ${bytes} for ${what}`);
  }
  return b;
}

function addressesOf(v: unknown): Uint8Array[] {
  if (v === undefined || v === null) return [];
  const decode = (s: string, prefix: string) => {
    try {
      return decodeFixed(s, 20, 'address');
    } catch (e) {
      if (e instanceof ArgError) throw new ArgError(`${prefix}: ${e.message}`);
      throw e;
    }
  };
  if (typeof v === 'string') return [decode(v, 'invalid address')];
  if (!Array.isArray(v)) throw new ArgError('invalid addresses in query');
  return v.map((a: unknown, i) => {
    if (typeof a !== 'string') throw new ArgError(`non-string address at index ${i}`);
    return decode(a, `invalid address at index ${i}`);
  });
}

function topicsOf(v: unknown): Uint8Array[][] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    throw new ArgError(
      `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${STRUCT}.topics of type []interface {}`,
    );
  }
  if (v.length > MAX_TOPICS) throw new ArgError('exceed max topics');
  return v.map((position: unknown) => {
    if (position === null) return [];
    if (typeof position === 'string') return [decodeFixed(position, 32, 'topic')];
    if (!Array.isArray(position)) throw new ArgError('invalid topic(s)');
    if (position.length > MAX_SUB_TOPICS) throw new ArgError('exceed max topics');
    const any: Uint8Array[] = [];
    for (const t of position as unknown[]) {
      if (t === null) return []; // a null among the alternatives: anything matches here
      if (typeof t !== 'string') throw new ArgError('invalid topic(s)');
      any.push(decodeFixed(t, 32, 'topic'));
    }
    return any;
  });
}

/** filters.FilterCriteria. */
export const filterCriteriaArg: Decoder<FilterCriteria> = (v) => {
  const o = objectArg(v, 'filters.input');
  const blockHash = field(o, STRUCT, 'blockHash', hashArg);
  const fromBlock = field(o, STRUCT, 'fromBlock', blockNumberArg);
  const toBlock = field(o, STRUCT, 'toBlock', blockNumberArg);
  if (blockHash !== undefined && (fromBlock !== undefined || toBlock !== undefined)) {
    throw new ArgError('cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
  }
  const criteria: FilterCriteria = {
    addresses: addressesOf(o.address),
    topics: topicsOf(o.topics),
    ...(blockHash !== undefined ? { blockHash } : {}),
    ...(fromBlock !== undefined ? { fromBlock } : {}),
    ...(toBlock !== undefined ? { toBlock } : {}),
  };
  return criteria;
};
