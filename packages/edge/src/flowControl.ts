/**
 * HTTP/2 flow-control windows for every gRPC channel and server of the roles.
 *
 * HTTP/2 lets a sender have at most a window of unread bytes in flight, per stream and per
 * connection; the receiver opens it again (WINDOW_UPDATE) only as its event loop reads what came.
 * Node's default is 64 KiB. A BatchGet answer (~150 KB), a Submit with its bag (~200 KB) or a
 * block (~300 KB) then crosses in several windows, and each reopening waits for the receiver's
 * event loop: with clients and the miner busy 55-65% of the time, a BatchGet the storage node
 * answered in 2 ms reached the client after 60-90 ms, and a Submit the miner answered in 25 ms
 * after ~300 (e2e, stage means). With a window that holds any of these messages whole, the bytes
 * are in the receiver's buffers when its loop comes round: at the same load the committed rate
 * rose ~25% and the CPU per transaction fell ~15% (fuller batches), bench/results/flow-control-s15/.
 *
 * Channels take grpc-js's own option (`grpc-node.flow_control_window`: the stream window in the
 * SETTINGS frame and the connection window at once). grpc-js servers have no such option yet
 * (grpc/grpc-node#3058, open), so {@link widenServerWindows} sets both on the server the way that
 * change does: the stream window in the settings grpc-js hands `http2.createServer`, the
 * connection window on each session.
 */
import type { Server } from '@grpc/grpc-js';

/** The window, bytes: larger than any message the roles exchange under load (16 MiB). */
export const FLOW_CONTROL_WINDOW = 16 * 1024 * 1024;

/** Largest message a channel sends or receives (blocks with receipts, checkpoints' chunks, bags). */
export const MAX_CHANNEL_MESSAGE_BYTES = 256 * 1024 * 1024;

/** Options for a grpc-js channel (client) of a role: message limits and the wide window, plus `extra`. */
export function channelOptions(extra: Record<string, number> = {}): Record<string, number> {
  return {
    'grpc.max_receive_message_length': MAX_CHANNEL_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_CHANNEL_MESSAGE_BYTES,
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
    ...extra,
  };
}

/** The grpc-js internals widenServerWindows uses (private fields of `Server`, stable since 1.10). */
interface ServerInternals {
  commonServerOptions?: { settings?: Record<string, unknown> };
  http2Servers?: Map<{ on(event: 'session', f: (s: WindowedSession) => void): unknown }, unknown>;
}

interface WindowedSession {
  setLocalWindowSize(size: number): void;
}

/**
 * Widens a grpc-js server's receive windows to `window`: call it after `new Server(...)` (the
 * stream window goes into the settings its listeners are created with) and `afterBind` once
 * `bindAsync` resolved (the connection window, on every session from then on). `widened` is
 * false, and nothing changed, when the grpc-js in use lacks the fields this relies on.
 */
export function widenServerWindows(
  server: Server,
  window = FLOW_CONTROL_WINDOW,
): { widened: boolean; afterBind(): void } {
  const s = server as unknown as ServerInternals;
  if (s.commonServerOptions === undefined || !(s.http2Servers instanceof Map)) {
    return { widened: false, afterBind: () => {} };
  }
  s.commonServerOptions.settings = { ...s.commonServerOptions.settings, initialWindowSize: window };
  return {
    widened: true,
    afterBind: () => {
      for (const h of s.http2Servers!.keys()) {
        h.on('session', (session) => session.setLocalWindowSize(window));
      }
    },
  };
}
