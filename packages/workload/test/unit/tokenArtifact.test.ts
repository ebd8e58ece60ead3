/**
 * The committed src/tokenArtifact.ts is what scripts/compile.mjs makes from
 * contracts/MonsoonToken.sol today, and its code only uses opcodes the chain's fork has.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { hexToBytes } from '@monsoon/util';
import { tokenArtifact } from '@monsoon/workload';

const PKG = fileURLToPath(new URL('../..', import.meta.url));

/** The executable part of solc's runtime code: without the trailing CBOR metadata and its 2-byte length. */
function withoutMetadata(code: Uint8Array): Uint8Array {
  const metaLength = (code[code.length - 2]! << 8) | code[code.length - 1]!;
  return code.subarray(0, code.length - 2 - metaLength);
}

/** Every opcode of `code`, skipping PUSH immediates. */
function opcodes(code: Uint8Array): number[] {
  const out: number[] = [];
  for (let pc = 0; pc < code.length; pc++) {
    const op = code[pc]!;
    out.push(op);
    if (op >= 0x60 && op <= 0x7f) pc += op - 0x5f;
  }
  return out;
}

describe('tokenArtifact', () => {
  it('equals a fresh compile of the contract', () => {
    const res = spawnSync(process.execPath, [join(PKG, 'scripts/compile.mjs'), '--json'], {
      encoding: 'utf8',
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const fresh = JSON.parse(res.stdout);
    expect(tokenArtifact.runtimeBytecode).toBe(fresh.runtimeBytecode);
    expect(tokenArtifact.abi).toEqual(fresh.abi);
    expect(tokenArtifact.solcVersion).toBe(fresh.solcVersion);
    expect(tokenArtifact.settings).toEqual({
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'shanghai',
    });
    expect(fresh.settings).toEqual(tokenArtifact.settings);
  });

  it('records the sha256 of the source on disk', () => {
    const source = readFileSync(join(PKG, 'contracts/MonsoonToken.sol'));
    expect(tokenArtifact.sourceSha256).toBe(`0x${createHash('sha256').update(source).digest('hex')}`);
  });

  it('exposes the ERC-20 interface', () => {
    const fns = tokenArtifact.abi
      .filter((e) => e.type === 'function')
      .map((e) => `${e.name}(${e.inputs.map((i) => i.type).join(',')})`)
      .sort();
    expect(fns).toEqual([
      'allowance(address,address)',
      'approve(address,uint256)',
      'balanceOf(address)',
      'decimals()',
      'name()',
      'symbol()',
      'totalSupply()',
      'transfer(address,uint256)',
      'transferFrom(address,address,uint256)',
    ]);
    const events = tokenArtifact.abi.filter((e) => e.type === 'event').map((e) => e.name);
    expect(events.sort()).toEqual(['Approval', 'Transfer']);
  });

  it('uses no opcode introduced after Shanghai (no TLOAD, TSTORE, MCOPY, BLOBHASH)', () => {
    const ops = new Set(opcodes(withoutMetadata(hexToBytes(tokenArtifact.runtimeBytecode))));
    for (const op of [0x49, 0x4a, 0x5c, 0x5d, 0x5e]) expect(ops.has(op)).toBe(false);
    expect(ops.has(0x55)).toBe(true); // SSTORE: the decoder above did find real code
  });
});
