/** `host:port` addresses for the servers' `listen` options. */
import { EdgeError, EdgeErrorCode } from './edgeError.js';

export interface HostPort {
  /** A host name or IP address; IPv6 without brackets. */
  readonly host: string;
  /** 0 = any free port. */
  readonly port: number;
}

/** Parses `host:port` or `[v6]:port`; throws a BadArgument EdgeError naming the input. */
export function parseHostPort(s: string, what = 'listen address'): HostPort {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(s.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) {
    throw new EdgeError(
      EdgeErrorCode.BadArgument,
      `${what} ${JSON.stringify(s)}: expected host:port (port 0-65535, 0 = any), e.g. 127.0.0.1:50051`,
      { what, found: s },
    );
  }
  return { host: m[1] ?? m[2]!, port };
}

/** `host:port`, bracketing an IPv6 host. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}
