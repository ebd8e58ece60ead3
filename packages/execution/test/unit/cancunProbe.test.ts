/**
 * The Cancun fixtures: the committed CancunProbe artifact is what a fresh compile at solc's
 * default EVM version makes, and uses the opcodes a Shanghai chain lacks (the differential test
 * runs it at each fork); a blob transaction is refused with geth's words at every fork.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { rlpEncode } from '@monsoon/dsm-tree';
import {
  decodeSignedTx,
  decodeTransaction,
  defaultChainRules,
  ExecutionError,
  ExecutionErrorCode,
  makeCommon,
} from '@monsoon/execution';
import { cancunProbeArtifact } from '../fixtures/cancunProbeArtifact.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Every opcode of `code`, skipping PUSH immediates. */
function opcodes(code: Uint8Array): Set<number> {
  const out = new Set<number>();
  for (let pc = 0; pc < code.length; pc++) {
    const op = code[pc]!;
    out.add(op);
    if (op >= 0x60 && op <= 0x7f) pc += op - 0x5f;
  }
  return out;
}

describe('cancunProbeArtifact', () => {
  it('equals a fresh compile at solc’s default EVM version', () => {
    const res = spawnSync(process.execPath, [`${FIXTURES}compileCancunProbe.mjs`, '--json'], {
      encoding: 'utf8',
    });
    expect(res.status).toBe(0);
    const fresh = JSON.parse(res.stdout);
    expect(fresh).toEqual(JSON.parse(JSON.stringify(cancunProbeArtifact)));
    expect(cancunProbeArtifact.settings).not.toHaveProperty('evmVersion');
    expect(['cancun', 'prague', 'osaka']).toContain(cancunProbeArtifact.evmVersion);
    const source = readFileSync(`${FIXTURES}CancunProbe.sol`);
    expect(cancunProbeArtifact.sourceSha256).toBe(`0x${createHash('sha256').update(source).digest('hex')}`);
  });

  it('uses TLOAD, TSTORE and MCOPY', () => {
    const ops = opcodes(Buffer.from(cancunProbeArtifact.bytecode.slice(2), 'hex'));
    for (const op of [0x5c, 0x5d, 0x5e]) expect(ops.has(op)).toBe(true);
  });
});

describe('a blob transaction (EIP-4844, type 3)', () => {
  const b = (n: bigint): Uint8Array =>
    n === 0n ? new Uint8Array(0) : Buffer.from(n.toString(16).padStart(2, '0'), 'hex');
  const versionedHash = Uint8Array.of(1, ...new Uint8Array(31).fill(7));
  const raw = (chainId: bigint) =>
    Uint8Array.of(
      3,
      ...rlpEncode([
        b(chainId),
        b(0n),
        b(1_000_000_000n),
        b(5_000_000_000n),
        b(21_000n),
        new Uint8Array(20).fill(0x42),
        b(1n),
        new Uint8Array(0),
        [],
        b(1n),
        [versionedHash],
        b(1n),
        new Uint8Array(32).fill(0x11),
        new Uint8Array(32).fill(0x22),
      ]),
    );

  it.each(['shanghai', 'cancun', 'prague', 'osaka'] as const)(
    'is refused with geth’s words at %s',
    (fork) => {
      const rules = { ...defaultChainRules, fork };
      const common = makeCommon(rules);
      for (const decode of [decodeSignedTx, decodeTransaction]) {
        let err: unknown;
        try {
          decode(raw(rules.chainId), common);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(ExecutionError);
        expect((err as ExecutionError).code).toBe(ExecutionErrorCode.BadTransaction);
        expect((err as ExecutionError).message).toBe(
          'BAD_TRANSACTION: transaction type not supported: tx type 3 not supported by this pool',
        );
      }
    },
  );
});
