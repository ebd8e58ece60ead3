/**
 * parseGenesis reads genesis.json as geth does: the numbers geth's HexOrDecimal types take in
 * hex or decimal (strings or JSON numbers), the chain config's numbers as JSON numbers, 0x-hex
 * bytes, and the fork geth would run at the genesis; everything else is refused with a
 * BadGenesis ProtocolError that names the field.
 */
import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_MIN_DIFFICULTY,
  type Genesis,
  isProtocolError,
  minDifficultyOf,
  ProtocolErrorCode,
  parseGenesis,
} from '@monsoon/protocol';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const A = '0x1111111111111111111111111111111111111111';
const B = '2222222222222222222222222222222222222222';
const blob = (target: number, max: number) => ({ target, max, baseFeeUpdateFraction: 3338477 });

/** A genesis as `geth --dev dumpgenesis` writes one (trimmed): hex everywhere, Prague from the start. */
function gethHex(): Record<string, unknown> {
  return {
    config: {
      chainId: 1337,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      muirGlacierBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      arrowGlacierBlock: 0,
      grayGlacierBlock: 0,
      shanghaiTime: 0,
      cancunTime: 0,
      pragueTime: 0,
      terminalTotalDifficulty: 0,
      blobSchedule: { cancun: blob(3, 6), prague: blob(6, 9) },
    },
    nonce: '0x0',
    timestamp: '0x0',
    extraData: '0x',
    gasLimit: '0x1c9c380',
    difficulty: '0x1',
    mixHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
    coinbase: '0x0000000000000000000000000000000000000000',
    alloc: {
      [A]: { balance: '0xde0b6b3a7640000', nonce: '0x1' },
      [B]: { balance: '0x0', code: '0x6001600055', storage: { '0x01': '0x2a', '0x02': '0x00' } },
    },
    number: '0x0',
    gasUsed: '0x0',
    parentHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
    baseFeePerGas: '0x3b9aca00',
    excessBlobGas: '0x0',
    blobGasUsed: '0x0',
  };
}

/** The same genesis with every quantity in decimal, some as JSON numbers. */
function gethDecimal(): Record<string, unknown> {
  const g = gethHex();
  return {
    ...g,
    nonce: 0,
    timestamp: '0',
    gasLimit: 30000000,
    difficulty: '1',
    baseFeePerGas: 1000000000,
    excessBlobGas: 0,
    alloc: {
      [A]: { balance: '1000000000000000000', nonce: 1 },
      [B]: { balance: 0, code: '0x6001600055', storage: { '01': '2a', '0x02': '0x00' } },
    },
  };
}

function refusal(doc: unknown): { field: unknown; message: string } {
  try {
    parseGenesis(doc);
  } catch (e) {
    if (!isProtocolError(e, ProtocolErrorCode.BadGenesis)) throw e;
    return { field: e.meta.field, message: e.message };
  }
  throw new Error('expected parseGenesis to refuse the document');
}

// biome-ignore lint/suspicious/noExplicitAny: the cases edit arbitrary JSON, as a file could hold it
type Doc = Record<string, any>;

/** `gethHex()` with `edit` applied to it (a deep copy first). */
function edited(edit: (g: Doc) => void): Record<string, unknown> {
  const g = structuredClone(gethHex()) as Doc;
  edit(g);
  return g;
}

describe('parseGenesis reads what geth writes', () => {
  const expectParsed = (g: Genesis) => {
    expect(g.chainId).toBe(1337n);
    expect(g.fork).toBe('prague');
    expect(g.gasLimit).toBe(30_000_000n);
    expect(g.difficulty).toBe(1n);
    expect(g.baseFeePerGas).toBe(1_000_000_000n);
    expect(g.timestamp).toBe(0n);
    expect(hex(g.nonce)).toBe('0000000000000000');
    expect(g.extraData).toEqual(new Uint8Array(0));
    const [a, b] = g.alloc;
    expect([hex(a!.address), a!.balance, a!.nonce]).toEqual([A.slice(2), 10n ** 18n, 1n]);
    expect([hex(b!.address), b!.balance, hex(b!.code)]).toEqual([B, 0n, '6001600055']);
    // Storage keys left-padded to 32 bytes; a zero value is no entry.
    expect(b!.storage.map(([k, v]) => [hex(k), hex(v)])).toEqual([[`${'00'.repeat(31)}01`, '2a']]);
  };

  it('in hex, with "nonce": "0x0"', () => expectParsed(parseGenesis(gethHex())));

  it('in decimal, as strings and as JSON numbers', () => expectParsed(parseGenesis(gethDecimal())));

  it('takes the header nonce as a uint64, hex or decimal', () => {
    expect(hex(parseGenesis({ ...gethHex(), nonce: '0x0000000000000042' }).nonce)).toBe('0000000000000042');
    expect(hex(parseGenesis({ ...gethHex(), nonce: '66' }).nonce)).toBe('0000000000000042');
    expect(hex(parseGenesis({ ...gethHex(), nonce: '' }).nonce)).toBe('0000000000000000');
  });

  it('reads the difficulty rule from config.monsoon.minDifficulty: 1 when absent, 0 only when said', () => {
    expect(parseGenesis({ difficulty: '0x0', alloc: {} }).minDifficulty).toBe(1n);
    expect(minDifficultyOf(parseGenesis({ difficulty: '0x0', alloc: {} }))).toBe(DEFAULT_MIN_DIFFICULTY);
    const zero = { config: { chainId: 7, monsoon: { minDifficulty: 0 } }, difficulty: '0x0', alloc: {} };
    expect(parseGenesis(zero).minDifficulty).toBe(0n);
    const hexed = { config: { monsoon: { minDifficulty: '0x400' } }, difficulty: '0x0', alloc: {} };
    expect(parseGenesis(hexed).minDifficulty).toBe(1024n);
    expect(() => parseGenesis({ config: { monsoon: 5 }, difficulty: '0x0', alloc: {} })).toThrow(
      /config\.monsoon/,
    );
    expect(() =>
      parseGenesis({ config: { monsoon: { minDifficulty: -1 } }, difficulty: '0x0', alloc: {} }),
    ).toThrow(/config\.monsoon\.minDifficulty/);
  });

  it('keeps the defaults for what geth lets a file leave out', () => {
    const g = parseGenesis({ difficulty: '0x0', alloc: {} });
    expect([g.chainId, g.fork, g.gasLimit, g.timestamp, g.baseFeePerGas]).toEqual([
      1337n,
      undefined,
      30_000_000n,
      0n,
      undefined,
    ]);
  });
});

describe('parseGenesis chooses the fork active at the genesis, as geth does', () => {
  const withConfig = (config: Record<string, unknown>, timestamp = '0x0') =>
    parseGenesis({ config, timestamp, difficulty: '0x0', alloc: {} }).fork;
  const upTo = (last: string): Record<string, unknown> => {
    const keys = [
      'homesteadBlock',
      'eip150Block',
      'eip155Block',
      'eip158Block',
      'byzantiumBlock',
      'constantinopleBlock',
      'petersburgBlock',
      'istanbulBlock',
      'berlinBlock',
      'londonBlock',
    ];
    return Object.fromEntries(keys.slice(0, keys.indexOf(last) + 1).map((k) => [k, 0]));
  };

  it('London, Paris (the merge reached at genesis, or mergeNetsplitBlock), Shanghai … Osaka', () => {
    expect(withConfig({ chainId: 1, ...upTo('londonBlock') })).toBe('london');
    expect(withConfig({ ...upTo('londonBlock'), arrowGlacierBlock: 0, grayGlacierBlock: 0 })).toBe('london');
    expect(withConfig({ ...upTo('londonBlock'), terminalTotalDifficulty: 0 })).toBe('paris');
    expect(withConfig({ ...upTo('londonBlock'), terminalTotalDifficulty: 100 })).toBe('london');
    expect(withConfig({ ...upTo('londonBlock'), mergeNetsplitBlock: 0 })).toBe('paris');
    const shanghai = { ...upTo('londonBlock'), shanghaiTime: 0 };
    expect(withConfig(shanghai)).toBe('shanghai');
    const cancun = { ...shanghai, cancunTime: 0, blobSchedule: { cancun: blob(3, 6) } };
    expect(withConfig(cancun)).toBe('cancun');
    const osaka = {
      ...cancun,
      pragueTime: 0,
      osakaTime: 0,
      blobSchedule: { cancun: blob(3, 6), prague: blob(6, 9), osaka: blob(6, 9) },
    };
    expect(withConfig(osaka)).toBe('osaka');
  });

  it('a time fork at or before the genesis timestamp is active', () => {
    const c = {
      ...upTo('londonBlock'),
      shanghaiTime: 5,
      cancunTime: 1000,
      blobSchedule: { cancun: blob(3, 6) },
    };
    expect(withConfig(c, '1000')).toBe('cancun');
    expect(withConfig(c, '0x3e9')).toBe('cancun');
  });

  it('the workload genesis config (every fork to Shanghai, no terminalTotalDifficulty) is Shanghai', () => {
    expect(
      withConfig({ chainId: 1337, ...upTo('londonBlock'), mergeNetsplitBlock: 0, shanghaiTime: 0 }),
    ).toBe('shanghai');
  });
});

describe('parseGenesis refuses, naming the field', () => {
  const cases: [string, (g: Doc) => void, string, RegExp][] = [
    [
      'a non-hex nonce',
      (g) => (g.nonce = '0xzz'),
      'nonce',
      /expected a hex \(0x…\) or decimal integer, found "0xzz"/,
    ],
    ['a bare 0x nonce (geth: invalid)', (g) => (g.nonce = '0x'), 'nonce', /found "0x"/],
    ['a nonce over 64 bits', (g) => (g.nonce = '0x10000000000000000'), 'nonce', /does not fit 64 bits/],
    ['a gas limit in exponent form', (g) => (g.gasLimit = '3e7'), 'gasLimit', /found "3e7"/],
    ['a negative timestamp', (g) => (g.timestamp = -1), 'timestamp', /non-negative integer, found -1/],
    ['a fractional gas limit', (g) => (g.gasLimit = 1.5), 'gasLimit', /non-negative integer, found 1.5/],
    ['a JSON number too large to read exactly', (g) => (g.gasLimit = 2 ** 60), 'gasLimit', /above 2\^53/],
    ['a missing difficulty', (g) => delete g.difficulty, 'difficulty', /missing \(geth requires it\)/],
    ['a difficulty over 256 bits', (g) => (g.difficulty = `0x1${'0'.repeat(64)}`), 'difficulty', /256 bits/],
    ['a signed base fee', (g) => (g.baseFeePerGas = '-5'), 'baseFeePerGas', /found "-5"/],
    ['a genesis that is not block 0', (g) => (g.number = '0x1'), 'number', /block 0, found 1/],
    ['extraData without 0x', (g) => (g.extraData = 'abcd'), 'extraData', /without 0x prefix/],
    ['extraData of odd length', (g) => (g.extraData = '0xabc'), 'extraData', /odd length/],
    ['a short coinbase', (g) => (g.coinbase = '0x1234'), 'coinbase', /expected 20 bytes, found 2/],
    ['a short mixHash', (g) => (g.mixHash = '0x00'), 'mixHash', /expected 32 bytes, found 1/],
    ['a missing alloc', (g) => delete g.alloc, 'alloc', /missing/],
    ['an account without balance', (g) => delete g.alloc[A].balance, `alloc[${A}].balance`, /missing/],
    [
      'a balance that is not a number',
      (g) => (g.alloc[A].balance = true),
      `alloc[${A}].balance`,
      /found true/,
    ],
    ['an account nonce in words', (g) => (g.alloc[A].nonce = 'one'), `alloc[${A}].nonce`, /found "one"/],
    ['code without 0x', (g) => (g.alloc[B].code = '6001'), `alloc[${B}].code`, /without 0x prefix/],
    [
      'a storage key over 32 bytes',
      (g) => (g.alloc[B].storage = { [`0x${'11'.repeat(33)}`]: '0x01' }),
      `alloc[${B}].storage slot`,
      /too many hex characters/,
    ],
    [
      'a storage value of odd length',
      (g) => (g.alloc[B].storage = { '0x01': '0x123' }),
      `alloc[${B}].storage[0x01]`,
      /invalid hex storage key\/value/,
    ],
    [
      'a chain id as a string',
      (g) => (g.config.chainId = '0x539'),
      'config.chainId',
      /expected a JSON number/,
    ],
    [
      'a fork time as a string',
      (g) => (g.config.cancunTime = '0'),
      'config.cancunTime',
      /expected a JSON number/,
    ],
    [
      'a fork after one left out',
      (g) => delete g.config.shanghaiTime,
      'config.cancunTime',
      /unsupported fork ordering: shanghaiTime not enabled, but cancunTime enabled at timestamp 0/,
    ],
    [
      'forks out of order',
      (g) => {
        g.config.shanghaiTime = 5;
        g.timestamp = '0xa';
      },
      'config.cancunTime',
      /unsupported fork ordering: shanghaiTime enabled at timestamp 5, but cancunTime enabled at timestamp 0/,
    ],
    [
      'a fork after the genesis',
      (g) => (g.config.pragueTime = 1_700_000_000),
      'config.pragueTime',
      /Monsoon runs one fork from its genesis; pragueTime 1700000000 is after the genesis timestamp 0/,
    ],
    [
      'a block fork after block 0',
      (g) => (g.config.mergeNetsplitBlock = 5),
      'config.mergeNetsplitBlock',
      /after the genesis block 0/,
    ],
    [
      'Cancun without its blob schedule',
      (g) => delete g.config.blobSchedule.cancun,
      'config.blobSchedule',
      /invalid chain configuration: missing entry for fork "cancun" in blobSchedule/,
    ],
    [
      'a blob schedule without an update fraction',
      (g) => (g.config.blobSchedule.prague.baseFeeUpdateFraction = 0),
      'config.blobSchedule.prague',
      /update fraction must be defined and non-zero/,
    ],
    [
      'a fork Monsoon does not run',
      (g) => (g.config.verkleTime = 0),
      'config.verkleTime',
      /Monsoon does not implement/,
    ],
    [
      'forks only up to Berlin',
      (g) => {
        for (const k of Object.keys(g.config)) if (!/chainId|^[a-z0-9]+Block$/.test(k)) delete g.config[k];
        for (const k of ['londonBlock', 'arrowGlacierBlock', 'grayGlacierBlock']) delete g.config[k];
      },
      'config',
      /needs London .* found forks only up to berlinBlock/,
    ],
  ];

  it.each(cases)('%s', (_, edit, field, message) => {
    const r = refusal(edited(edit));
    expect(r.field).toBe(field);
    expect(r.message).toMatch(new RegExp(`^BAD_GENESIS: genesis ${field.replace(/[[\].]/g, '\\$&')}: `));
    expect(r.message).toMatch(message);
  });
});
