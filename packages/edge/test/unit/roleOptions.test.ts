import { hostname } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import {
  advertisedAddress,
  EdgeError,
  envOf,
  flagOf,
  mergeOptions,
  optionsFromEnv,
  optionsFromFile,
  type RoleOption,
  read,
} from '@monsoon/edge';

const options: RoleOption[] = [
  { name: 'genesis', arg: '<file>', description: '', path: true },
  { name: 'dataDir', arg: '<dir>', description: '', path: true },
  { name: 'listen', arg: '<host:port>', description: '' },
  { name: 'blockInterval', arg: '<ms>', description: '' },
];

describe('role option names', () => {
  it('derives the flag and the environment variable from the camelCase name', () => {
    expect(flagOf('blockInterval')).toBe('--block-interval');
    expect(envOf('blockInterval')).toBe('MONSOON_BLOCK_INTERVAL');
    expect(flagOf('listen')).toBe('--listen');
    expect(envOf('dataDir')).toBe('MONSOON_DATA_DIR');
  });
});

describe('role option sources', () => {
  it('flags over environment over config file', () => {
    const file = optionsFromFile(
      { listen: '0.0.0.0:1', 'block-interval': 500, genesis: 'g.json' },
      '/etc/m/c.json',
      options,
    );
    const env = optionsFromEnv(
      { MONSOON_LISTEN: '0.0.0.0:2', MONSOON_BLOCK_INTERVAL: '', OTHER: 'x' },
      options,
    );
    const flags = { listen: '127.0.0.1:3', dataDir: undefined };
    expect(env).toEqual({ listen: '0.0.0.0:2' });
    expect(mergeOptions(flags, env, file)).toEqual({
      listen: '127.0.0.1:3',
      blockInterval: 500,
      genesis: '/etc/m/g.json',
    });
    expect(mergeOptions({}, env, file).listen).toBe('0.0.0.0:2');
    expect(mergeOptions({}, {}, file).listen).toBe('0.0.0.0:1');
  });

  it('resolves relative paths in a file against its folder, leaves absolute ones', () => {
    const file = optionsFromFile({ genesis: '/abs/g.json', dataDir: 'data/s0' }, '/etc/m/c.json', options);
    expect(file).toEqual({ genesis: '/abs/g.json', dataDir: '/etc/m/data/s0' });
  });

  it('refuses an unknown key naming the known ones, and a file that is not an object', () => {
    expect(() => optionsFromFile({ shardz: 1 }, 'c.json', options)).toThrow(
      /config c\.json: unknown option "shardz"; expected one of genesis, dataDir, listen, blockInterval$/,
    );
    expect(() => optionsFromFile([1], 'c.json', options)).toThrow(/config c\.json: expected a JSON object/);
  });
});

describe('role option readers', () => {
  it('accept what flags (strings) and config files (JSON values) give', () => {
    expect(read.int('42', 'n')).toBe(42);
    expect(read.int(42, 'n')).toBe(42);
    expect(read.hostPorts('127.0.0.1:1, 127.0.0.1:2,', 'peers')).toEqual(['127.0.0.1:1', '127.0.0.1:2']);
    expect(read.hostPorts(['127.0.0.1:1'], 'peers')).toEqual(['127.0.0.1:1']);
    expect(read.hostPorts(undefined, 'peers')).toEqual([]);
    expect(read.optionalHostPort('off', 'metrics')).toBeUndefined();
    expect(read.bool('true', 'x')).toBe(true);
    expect(read.bool(false, 'x')).toBe(false);
  });

  it('refuse with an EdgeError naming the flag, what was expected and what was found', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(EdgeError);
        return (e as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal(() => read.int('-1', 'blockInterval'))).toBe(
      'BAD_ARGUMENT: --block-interval: expected an integer >= 0, found "-1"',
    );
    expect(refusal(() => read.int('1.5', 'window', 1))).toBe(
      'BAD_ARGUMENT: --window: expected an integer >= 1, found "1.5"',
    );
    expect(refusal(() => read.oneOf('x', 'fsync', ['always', 'none']))).toBe(
      'BAD_ARGUMENT: --fsync: expected always | none, found "x"',
    );
    expect(refusal(() => read.hostPorts('127.0.0.1:1,nohost', 'peers'))).toMatch(
      /--peers "nohost": expected host:port/,
    );
    expect(refusal(() => read.str('  ', 'genesis'))).toMatch(/--genesis: expected a non-empty string/);
    expect(refusal(() => read.bool('yes', 'x'))).toMatch(/--x: expected true \| false, found "yes"/);
  });
});

describe('advertisedAddress', () => {
  it('is --advertise when given, the bound address when concrete, the hostname for a wildcard', () => {
    expect(advertisedAddress('0.0.0.0:50051', 'storage-0.svc:50051')).toBe('storage-0.svc:50051');
    expect(advertisedAddress('127.0.0.1:50051')).toBe('127.0.0.1:50051');
    expect(advertisedAddress('0.0.0.0:50051')).toBe(`${hostname()}:50051`);
    expect(advertisedAddress('[::]:7')).toBe(`${hostname()}:7`);
  });
});
