/**
 * A role's options from three sources, flags over environment over a JSON config file over the
 * role's defaults, and the readers that check one raw value. Every refusal is an EdgeError
 * BAD_ARGUMENT whose message names the flag, what was expected and what was found.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { EdgeError, EdgeErrorCode } from './edgeError.js';
import { parseHostPort } from './hostPort.js';

/** One option of a role command. */
export interface RoleOption {
  /** camelCase: the flag is its kebab-case (`dataDir` → `--data-dir`), the variable `MONSOON_DATA_DIR`. */
  readonly name: string;
  /** The flag's argument as help shows it (`<host:port>`); absent for a switch (true when given). */
  readonly arg?: string;
  readonly description: string;
  /** A path: relative in a config file means relative to that file's folder. */
  readonly path?: boolean;
}

/** Raw option values by camelCase name: strings from flags and environment, JSON values from a file. */
export type RawOptions = Record<string, unknown>;

/** `dataDir` → `--data-dir`. */
export function flagOf(name: string): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** `dataDir` → `MONSOON_DATA_DIR`. */
export function envOf(name: string): string {
  return `MONSOON_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

function camel(k: string): string {
  return k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function bad(message: string, option?: string): never {
  throw new EdgeError(EdgeErrorCode.BadArgument, message, option === undefined ? {} : { option });
}

/**
 * A parsed config file: an object whose keys are option names (camelCase or kebab-case); an
 * unknown key is refused naming the known ones. Relative paths resolve against the file's folder.
 */
export function optionsFromFile(doc: unknown, file: string, options: readonly RoleOption[]): RawOptions {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    bad(`config ${file}: expected a JSON object`);
  }
  const byName = new Map(options.map((o) => [o.name, o]));
  const out: RawOptions = {};
  for (const [k, v] of Object.entries(doc)) {
    const option = byName.get(camel(k));
    if (option === undefined || option.name === 'config') {
      bad(
        `config ${file}: unknown option "${k}"; expected one of ${[...byName.keys()].filter((n) => n !== 'config').join(', ')}`,
      );
    }
    out[option.name] =
      option.path && typeof v === 'string' && v !== '' && !isAbsolute(v) ? resolve(dirname(file), v) : v;
  }
  return out;
}

/** The options set in the environment (`MONSOON_<NAME>`, empty values ignored). */
export function optionsFromEnv(env: NodeJS.ProcessEnv, options: readonly RoleOption[]): RawOptions {
  const out: RawOptions = {};
  for (const o of options) {
    const v = env[envOf(o.name)];
    if (v !== undefined && v !== '' && o.name !== 'config') out[o.name] = v;
  }
  return out;
}

/** Flags over environment over file: the first source that sets a name wins. */
export function mergeOptions(...sources: readonly RawOptions[]): RawOptions {
  const out: RawOptions = {};
  for (const s of [...sources].reverse()) {
    for (const [k, v] of Object.entries(s)) if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The checks of one raw value, each naming the option's flag in its refusal. */
export const read = {
  str(v: unknown, name: string): string {
    if (typeof v !== 'string' || v.trim() === '')
      bad(`${flagOf(name)}: expected a non-empty string, found ${JSON.stringify(v)}`, name);
    return v.trim();
  },
  int(v: unknown, name: string, min = 0): number {
    const n =
      typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min)
      bad(`${flagOf(name)}: expected an integer >= ${min}, found ${JSON.stringify(v)}`, name);
    return n;
  },
  oneOf<T extends string>(v: unknown, name: string, values: readonly T[]): T {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      bad(`${flagOf(name)}: expected ${values.join(' | ')}, found ${JSON.stringify(v)}`, name);
    }
    return v as T;
  },
  /** A `host:port`, checked, as given. */
  hostPort(v: unknown, name: string): string {
    const s = read.str(v, name);
    parseHostPort(s, flagOf(name));
    return s;
  },
  /** A `host:port` or `off` / empty (undefined). */
  optionalHostPort(v: unknown, name: string): string | undefined {
    if (v === undefined || v === 'off' || v === '') return undefined;
    return read.hostPort(v, name);
  },
  /** A comma-separated list (or a JSON array of strings) of `host:port`s. */
  hostPorts(v: unknown, name: string): string[] {
    if (v === undefined) return [];
    const items = Array.isArray(v)
      ? v
      : typeof v === 'string'
        ? v.split(',')
        : bad(`${flagOf(name)}: expected host:port,…, found ${JSON.stringify(v)}`, name);
    return items
      .map((s) => (typeof s === 'string' ? s.trim() : s))
      .filter((s) => s !== '')
      .map((s) => read.hostPort(s, name));
  },
  /** A switch: true, false, or the strings "true"/"false"/"1"/"0". */
  bool(v: unknown, name: string): boolean {
    if (v === undefined) return false;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    return bad(`${flagOf(name)}: expected true | false, found ${JSON.stringify(v)}`, name);
  },
};
