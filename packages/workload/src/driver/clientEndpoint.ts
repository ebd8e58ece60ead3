/** Where the driver sends transactions: a client's gRPC ClientService, or its JSON-RPC URL. */
import { formatHostPort, parseHostPort } from '@monsoon/edge';
import { DriverError, DriverErrorCode } from './driverError.js';

/**
 * A Monsoon client as the driver reaches it: `grpc` (ClientService.SendTransactions, the bulk
 * path) or `jsonrpc` (`eth_sendRawTransaction` in JSON-RPC batches, what any Ethereum node takes).
 */
export type ClientEndpoint =
  | { readonly kind: 'grpc'; readonly address: string }
  | { readonly kind: 'jsonrpc'; readonly url: string };

/** `host:port` is gRPC, an `http://` or `https://` URL is JSON-RPC; anything else is BAD_ENDPOINT. */
export function parseClientEndpoint(s: string): ClientEndpoint {
  const text = s.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      return { kind: 'jsonrpc', url: new URL(text).toString() };
    } catch {
      // Reported below with the gRPC form.
    }
  } else {
    try {
      return { kind: 'grpc', address: formatHostPort(parseHostPort(text, 'client')) };
    } catch {
      // Reported below.
    }
  }
  throw new DriverError(
    DriverErrorCode.BadEndpoint,
    `client ${JSON.stringify(s)}: expected host:port (gRPC) or an http(s):// URL (JSON-RPC)`,
    { found: s },
  );
}

/** What an endpoint is called in reports: its address or URL. */
export function endpointName(e: ClientEndpoint): string {
  return e.kind === 'grpc' ? e.address : e.url;
}
