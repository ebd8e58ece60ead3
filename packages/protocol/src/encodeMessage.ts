/**
 * Protobuf encoding through one writer per process. ts-proto's `X.encode(m).finish()` starts a new
 * writer at 128 bytes and doubles it until the message fits (each step a zeroed allocation and a
 * copy of what was written), copies the result out, and the gRPC serializers it generates copy
 * that again into a Buffer. A BatchGet answer of 300 accounts (335 KB) took ~210 µs of CPU that
 * way and ~120 µs here (bench/results/encode-s14/encodeAb.mjs): the shared
 * writer keeps its grown buffer, the one copy out of it is the message's own bytes, and the Buffer
 * grpc-js sends is a view of them.
 *
 * Encoding is synchronous, so one writer serves every message of the thread. A message that throws
 * part-way (a field out of range) leaves the writer mid-message: it is replaced. A writer grown
 * past KEEP_BYTES by an outsized message is replaced too, so it does not hold that memory for good.
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';

/** What ts-proto generates for a message type, as far as encoding goes. */
export interface MessageEncoder<T> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
}

/** Messages larger than this leave a fresh writer behind them (see the file's comment). */
const KEEP_BYTES = 32 << 20;

let writer = new BinaryWriter();

/** `message`'s protobuf encoding, in an array of its own (nothing else shares its memory). */
export function encodeMessage<T>(codec: MessageEncoder<T>, message: T): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = codec.encode(message, writer).finish();
  } catch (e) {
    writer = new BinaryWriter();
    throw e;
  }
  if (bytes.length > KEEP_BYTES) writer = new BinaryWriter();
  return bytes;
}

/** {@link encodeMessage} as the Buffer a gRPC serializer returns (a view of the same bytes, not a copy). */
export function encodeToBuffer<T>(codec: MessageEncoder<T>, message: T): Buffer {
  const bytes = encodeMessage(codec, message);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * `bytes` (a Buffer grpc-js hands a deserializer) as a plain Uint8Array over the same memory: the
 * messages decoded from it then hold plain Uint8Array views (BinaryReader.bytes() takes subarrays
 * of what it reads), which the converters use as they are instead of viewing each field again.
 */
export function plainView(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
