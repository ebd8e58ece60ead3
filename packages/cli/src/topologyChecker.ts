/**
 * Checks one topology document: each check notes a problem as `path: expected …, found …` and
 * returns a fallback, so every problem of a file is reported at once (`parseTopology`).
 */
/** A JSON object as parsed. */
export type Json = Record<string, unknown>;

/** Collects every problem of one document, so a file with three mistakes is fixed in one go. */
export class Checker {
  readonly issues: string[] = [];

  /** `value` as an object with only `allowed` keys, or undefined (issue noted) if it is not one. */
  object(path: string, value: unknown, allowed: readonly string[]): Json | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.issues.push(`${path === '' ? '' : `${path}: `}expected an object, found ${describe(value)}`);
      return undefined;
    }
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        this.issues.push(
          `${path === '' ? '' : `${path}.`}${key}: unknown key (expected one of ${allowed.join(', ')})`,
        );
      }
    }
    return value as Json;
  }

  integer(path: string, value: unknown, fallback: number, min: number, max: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.issues.push(`${path}: expected an integer in [${min}, ${max}], found ${describe(value)}`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string | number>(path: string, value: unknown, fallback: T, allowed: readonly T[]): T {
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T)) {
      this.issues.push(
        `${path}: expected ${allowed.map((a) => JSON.stringify(a)).join(' | ')}, found ${describe(value)}`,
      );
      return fallback;
    }
    return value as T;
  }

  string(path: string, value: unknown, fallback: string, nonEmpty: boolean): string {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || (nonEmpty && value.length === 0)) {
      this.issues.push(`${path}: expected a${nonEmpty ? ' non-empty' : ''} string, found ${describe(value)}`);
      return fallback;
    }
    return value;
  }

  boolean(path: string, value: unknown, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.issues.push(`${path}: expected true or false, found ${describe(value)}`);
      return fallback;
    }
    return value;
  }

  /** Extra flags: strings, none of them one the cluster sets. */
  args(path: string, value: unknown, managed: readonly string[]): readonly string[] {
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((a) => typeof a === 'string')) {
      this.issues.push(`${path}: expected an array of strings, found ${describe(value)}`);
      return [];
    }
    for (const arg of value as string[]) {
      const flag = managed.find((f) => arg === f || arg.startsWith(`${f}=`));
      if (flag !== undefined) this.issues.push(`${path}: ${flag} is set by the cluster, it can't be in args`);
    }
    return value as string[];
  }
}

/** A value as a message shows what was found: `nothing`, `an array`, `null`, `an object`, or its JSON. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return JSON.stringify(value);
}
