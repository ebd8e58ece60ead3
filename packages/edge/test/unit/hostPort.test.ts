/** host:port addresses as the roles' `--listen` and `--metrics` flags take them. */
import { describe, expect, it } from '@jest/globals';
import { EdgeError, formatHostPort, parseHostPort } from '@monsoon/edge';

describe('parseHostPort', () => {
  it('reads host:port and [v6]:port, refuses anything else', () => {
    expect(parseHostPort('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseHostPort('localhost:50051')).toEqual({ host: 'localhost', port: 50051 });
    expect(parseHostPort('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    for (const bad of ['127.0.0.1', ':80', 'host:65536', 'a b:1', '::1:80']) {
      expect(() => parseHostPort(bad)).toThrow(EdgeError);
    }
    expect(() => parseHostPort('localhost', '--listen')).toThrow(
      /^BAD_ARGUMENT: --listen "localhost": expected host:port \(port 0-65535, 0 = any\)/,
    );
  });

  it('formatHostPort brackets an IPv6 host, and parses back', () => {
    for (const s of ['127.0.0.1:0', 'localhost:50051', '[::1]:8080']) {
      expect(formatHostPort(parseHostPort(s))).toBe(s);
    }
  });
});
