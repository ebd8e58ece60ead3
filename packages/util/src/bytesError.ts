import { CodedError, codedErrorGuard } from './codedError.js';

/** Why bytes could not be read as hex, an integer or RLP. */
export enum BytesErrorCode {
  /** A string that is not hex of the expected form (prefix, even digit count, length). */
  BadHex = 'BAD_HEX',
  /** Bytes that should be RLP are not (truncated, non-canonical, trailing bytes, wrong shape). */
  BadRlp = 'BAD_RLP',
  /** An integer out of range for its encoding (negative, too many bytes, a leading zero). */
  BadInteger = 'BAD_INTEGER',
}

/** The metadata of each {@link BytesErrorCode}. */
export interface BytesErrorMeta {
  [BytesErrorCode.BadHex]: { readonly found: string; readonly expectedBytes?: number };
  [BytesErrorCode.BadRlp]: { readonly pos?: number; readonly len?: number; readonly trailing?: number };
  [BytesErrorCode.BadInteger]: { readonly found: string };
}

/** The error of the byte helpers: a code plus structured metadata. */
export class BytesError extends CodedError<BytesErrorCode, BytesErrorMeta> {}

/** True when `e` is a BytesError, optionally of the given code. */
export const isBytesError = codedErrorGuard<BytesError, BytesErrorMeta>(BytesError);
