/**
 * JSON-RPC over one WebSocket (`ws`): each text (or binary) message is a request or batch,
 * answered on the same socket as it completes (requests run concurrently, as in geth); every
 * HTTP method works here too, plus eth_subscribe / eth_unsubscribe. A subscription's first
 * notification is sent only after the answer carrying its id.
 *
 * Bounded: a consumer that lets more than `wsMaxBufferedBytes` pile up unsent (it does not read
 * fast enough) is dropped, as is one that leaves more than `maxQueuedNotifications`
 * notifications waiting; a peer that does not answer a ping within `wsPingMs` is dropped too.
 * Dropping ends the socket at once (a close frame would queue behind what is stuck).
 */
import type { Logger } from '@monsoon/edge';
import { WebSocket } from 'ws';
import type { RpcBackend } from './backend.js';
import type { ChainEvents } from './chainEvents.js';
import type { Filters } from './filters.js';
import { handleRpc, type RpcHandlerOptions, type RpcResponse } from './handleRpc.js';
import { RpcErrorCode } from './rpcError.js';
import { Subscriptions, type SubscriptionsOptions } from './subscriptions.js';

export interface WsConnectionOptions extends RpcHandlerOptions, SubscriptionsOptions {
  /** Unsent bytes a connection may accumulate before it is dropped as too slow. */
  wsMaxBufferedBytes: number;
  /** Interval between pings, ms; a peer that has not answered the last one by the next is dropped. 0 = none. */
  wsPingMs: number;
}

export interface WsConnectionModules {
  readonly backend: RpcBackend;
  readonly events?: ChainEvents;
  readonly filters?: Filters;
  readonly logger: Logger;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asText(data: WebSocket.RawData): string {
  const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
  return utf8.decode(bytes);
}

/** Serves JSON-RPC on `ws` until it closes; returns the connection's subscriptions (with ChainEvents). */
export function serveWebSocket(
  ws: WebSocket,
  o: WsConnectionOptions,
  modules: WsConnectionModules,
): Subscriptions | undefined {
  const { backend, events, filters, logger: log } = modules;
  let dropped = false;
  const drop = (why: string) => {
    if (dropped) return;
    dropped = true;
    log.warn('websocket dropped', { why, unsentBytes: ws.bufferedAmount });
    ws.terminate();
  };
  const send = (message: unknown) => {
    if (dropped || ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify(message));
    if (ws.bufferedAmount > o.wsMaxBufferedBytes) {
      drop(`too slow: more than ${o.wsMaxBufferedBytes} bytes unsent`);
    }
  };
  const subscriptions =
    events === undefined
      ? undefined
      : new Subscriptions(o, {
          events,
          backend,
          send,
          onOverflow: () => drop(`more than ${o.maxQueuedNotifications} notifications waiting`),
          logger: log,
        });
  const session = { events, filters, subscriptions };

  /** Sends an answer, then lets the subscriptions it created start talking. */
  const answer = (r: RpcResponse | RpcResponse[] | undefined) => {
    if (r === undefined) return;
    send(r);
    for (const one of Array.isArray(r) ? r : [r]) {
      if ('result' in one && typeof one.result === 'string') subscriptions?.activate(one.result);
    }
  };

  ws.on('message', (data) => {
    let text: string;
    try {
      text = asText(data);
    } catch {
      send({
        jsonrpc: '2.0',
        id: null,
        error: { code: RpcErrorCode.ParseError, message: 'parse error: the message is not UTF-8' },
      });
      return;
    }
    handleRpc(text, backend, o, log, session).then(answer, (e: unknown) =>
      log.error('websocket request failed', { error: e instanceof Error ? e.message : String(e) }),
    );
  });

  let alive = true;
  const pinger =
    o.wsPingMs > 0
      ? setInterval(() => {
          if (!alive) {
            drop(`no pong within ${o.wsPingMs} ms`);
            return;
          }
          alive = false;
          ws.ping();
        }, o.wsPingMs)
      : undefined;
  pinger?.unref();
  ws.on('pong', () => {
    alive = true;
  });
  ws.on('error', (e) => log.warn('websocket error', { error: e.message }));
  ws.on('close', () => {
    if (pinger !== undefined) clearInterval(pinger);
    subscriptions?.close();
  });
  return subscriptions;
}
