/**
 * A real process appending with fsync 'always' is SIGKILLed mid-stream, three times over on the
 * same log: every record it acknowledged survives intact, and anything beyond is whole.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type WalRecord, WriteAheadLog } from '@monsoon/storage-node';
import { makeTmpDir, removeDir } from '@monsoon/test-utils';
import { payloadFor } from '../helpers/payloads.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/walWriter.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

let dir: string;

beforeAll(() => {
  if (!existsSync(BUILT))
    throw new Error(`${BUILT} is missing: run \`npx tsc -b tsconfig.build.json\` first`);
});

beforeEach(async () => {
  dir = await makeTmpDir();
});

afterEach(async () => {
  await removeDir(dir);
});

/**
 * Runs the writer on `dir` until it has acknowledged `atLeast` records, SIGKILLs it, and
 * returns every seq it acknowledged (including lines already in the pipe when it died).
 */
function runAndKill(atLeast: number): Promise<bigint[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: bigint[] = [];
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      acked.push(BigInt(line));
      if (!killed && acked.length >= atLeast) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && killed) resolve(acked);
      else reject(new Error(`writer exited (code ${code}, signal ${signal}) before being killed: ${stderr}`));
    });
  });
}

async function replayAll(w: WriteAheadLog): Promise<WalRecord[]> {
  const out: WalRecord[] = [];
  for await (const r of w.replay()) out.push(r);
  return out;
}

describe('WriteAheadLog crash recovery (real process, SIGKILL)', () => {
  it('keeps every acknowledged record and never half a record', async () => {
    let ackedSoFar = 0n;
    for (let round = 0; round < 3; round++) {
      const acked = await runAndKill(50);
      expect(acked.length).toBeGreaterThanOrEqual(50);
      let maxAcked = 0n;
      for (const s of acked) if (s > maxAcked) maxAcked = s;
      expect(maxAcked).toBeGreaterThan(ackedSoFar); // each round continued the numbering

      const wal = await WriteAheadLog.create({ dir });
      try {
        const records = await replayAll(wal);
        // Contiguous from 1, so nothing acknowledged (in this round or before) is missing.
        expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => BigInt(i + 1)));
        expect(wal.lastSeq).toBe(BigInt(records.length));
        expect(wal.lastSeq).toBeGreaterThanOrEqual(maxAcked);
        // Intact, including any unacknowledged extra that made it to disk whole.
        for (const r of records) expect(r.payload).toEqual(payloadFor(r.seq));
      } finally {
        await wal.close();
      }
      ackedSoFar = maxAcked;
    }
  });
});
