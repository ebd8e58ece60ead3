/** A head feed served on a server-streaming gRPC call (SubscribeHeads). */
import { type ServerWritableStream, status } from '@grpc/grpc-js';
import type { HeadFeed } from './headFeed.js';

/**
 * Writes the feed's current head on `call`, then every new one. A slow subscriber skips heads:
 * while its stream is full only the newest head waits, so it always catches up to the current
 * head and never holds more than one unsent. Returns `end()`, which ends the stream (for a
 * server shutting down); `onFinish` hears once how the stream finished: OK when ended here,
 * CANCELLED when the client went away.
 */
export function streamHeads<H, W>(
  call: ServerWritableStream<unknown, W>,
  feed: HeadFeed<H>,
  encode: (head: H) => W,
  onFinish: (code: status) => void = () => {},
): () => void {
  let waiting = false;
  let pending: H | undefined;
  let ended = false;
  const send = (h: H): void => {
    if (ended) return;
    if (waiting) {
      pending = h;
      return;
    }
    if (!call.write(encode(h))) waiting = true;
  };
  const finish = (code: status): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    onFinish(code);
  };
  const end = (): void => {
    if (ended) return;
    finish(status.OK);
    call.end();
  };
  const unsubscribe = feed.subscribe(send);
  call.on('drain', () => {
    waiting = false;
    const p = pending;
    pending = undefined;
    if (p !== undefined) send(p);
  });
  call.on('cancelled', () => finish(status.CANCELLED));
  call.on('error', () => finish(status.CANCELLED));
  send(feed.current());
  return end;
}
