import { CodedError, codedErrorGuard } from '@monsoon/util';

/** Why the edge refused something. */
export enum EdgeErrorCode {
  /** An address, metric name or other argument is malformed or out of range. */
  BadArgument = 'BAD_ARGUMENT',
}

/** The error of the shared edge: a code plus structured metadata. */
export class EdgeError extends CodedError<EdgeErrorCode> {}

/** True when `e` is an EdgeError, optionally of the given code. */
export const isEdgeError = codedErrorGuard(EdgeError);
