/**
 * The addon's protocol on its own: a run that lacks keys asks for them all, one that has them
 * executes; `reset` makes an engine a new one (another fork, its state gone), as a pool reusing
 * engines relies on. Skipped, with the reason printed, where the addon is not built.
 */
import { describe, expect, it } from '@jest/globals';
import {
  decodeResult,
  type EngineFork,
  encodeConfig,
  evmAddon,
  evmUnavailable,
  RecordWriter,
  ResultBuffer,
  TxWriter,
} from '@monsoon/evm';

const EMPTY_CODE_HASH = Uint8Array.from(
  Buffer.from('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', 'hex'),
);
const CALLER = new Uint8Array(20).fill(1);
const COINBASE = new Uint8Array(20).fill(0xcb);
/** CLZ(1) (Osaka, EIP-7939) then STOP: an invalid opcode before Osaka. */
const CLZ_CODE = Uint8Array.of(0x60, 0x01, 0x1e, 0x00);

const config = (fork: EngineFork) =>
  encodeConfig({
    fork,
    chainId: 1337n,
    number: 1n,
    timestamp: 1n,
    gasLimit: 30_000_000n,
    baseFee: 7n,
    coinbase: COINBASE,
  });

/** A creation whose init code is CLZ_CODE: succeeds from Osaka, halts before. */
const creation = new TxWriter()
  .encode({
    type: 2,
    caller: CALLER,
    to: undefined,
    value: 0n,
    gasLimit: 100_000n,
    maxFee: 10n,
    priorityFee: 1n,
    nonce: 0n,
    chainId: 1337n,
    data: CLZ_CODE,
    accessList: [],
  })
  .slice();

function withCaller(): Uint8Array {
  const w = new RecordWriter();
  w.account(CALLER, 0n, 10n ** 18n, EMPTY_CODE_HASH);
  return w.take().slice();
}

const addon = evmAddon();
if (addon === undefined) {
  console.warn(`revm cases skipped: ${evmUnavailable()}`);
  it.skip(`[revm] the addon's protocol — skipped: ${evmUnavailable()}`, () => {});
} else {
  const { Engine } = addon;
  const answers = new ResultBuffer();
  describe('the revm addon', () => {
    it('asks for what it lacks, then executes', () => {
      const e = new Engine(config('osaka'));
      const first = decodeResult(answers.execute(e, creation, new Uint8Array(0)));
      expect(first.kind).toBe('lacking');
      if (first.kind === 'lacking') expect(first.keys.map((k) => k.kind)).toContain('account');
      const second = decodeResult(answers.execute(e, creation, withCaller()));
      expect(second.kind === 'lacking' ? second.keys.map((k) => k.kind) : []).not.toContain('slot');
    });

    it('reset: another fork, and nothing of the old state', () => {
      const e = new Engine(config('shanghai'));
      const run = (records: Uint8Array) => {
        let r = decodeResult(answers.execute(e, creation, records));
        const w = new RecordWriter();
        for (let i = 0; r.kind === 'lacking' && i < 8; i++) {
          for (const k of r.keys) if (k.kind === 'account') w.noAccount(k.address);
          r = decodeResult(answers.execute(e, creation, w.take().slice()));
        }
        return r;
      };
      const shanghai = run(withCaller());
      expect(shanghai.kind === 'executed' && shanghai.status).toBe(0); // CLZ is invalid
      e.reset(config('osaka'));
      const bare = decodeResult(answers.execute(e, creation, new Uint8Array(0)));
      expect(bare.kind).toBe('lacking'); // the caller was forgotten
      const osaka = run(withCaller());
      expect(osaka.kind === 'executed' && osaka.status).toBe(1);
    });

    it('an answer longer than the buffer is fetched whole; a short one is copied into it', () => {
      const e = new Engine(config('osaka'));
      // Init code LOG0 of 8 KiB of memory (PUSH2 0x2000, PUSH1 0, LOG0, STOP): a long answer.
      const logs = new TxWriter()
        .encode({
          type: 2,
          caller: CALLER,
          to: undefined,
          value: 0n,
          gasLimit: 1_000_000n,
          maxFee: 10n,
          priorityFee: 1n,
          nonce: 0n,
          chainId: 1337n,
          data: Uint8Array.of(0x61, 0x20, 0x00, 0x60, 0x00, 0xa0, 0x00),
          accessList: [],
        })
        .slice();
      let r = decodeResult(answers.execute(e, logs, withCaller())); // short: lands in the buffer
      for (let i = 0; r.kind === 'lacking' && i < 8; i++) {
        const w = new RecordWriter();
        for (const k of r.keys) if (k.kind === 'account') w.noAccount(k.address);
        r = decodeResult(answers.execute(e, logs, w.take().slice()));
      }
      expect(r.kind === 'executed' && r.logs[0]?.data.length).toBe(0x2000);
      const small = new Uint8Array(16);
      const n = e.execute(logs, new Uint8Array(0), small); // the same run again
      expect(n).toBeGreaterThan(0x2000);
      expect(small.every((b) => b === 0)).toBe(true); // not written: it did not fit
      expect(() => e.result(small)).toThrow(/result buffer/);
      const whole = new Uint8Array(n);
      expect(e.result(whole)).toBe(n);
      const again = decodeResult(whole);
      expect(again.kind === 'executed' && again.logs[0]?.data.length).toBe(0x2000);
    });

    it('refuses malformed input with a message', () => {
      const e = new Engine(config('cancun'));
      expect(() => answers.execute(e, creation.subarray(0, 10), new Uint8Array(0))).toThrow(
        /malformed engine input/,
      );
      expect(() => new Engine(Uint8Array.of(9))).toThrow(/fork index/);
    });
  });
}
