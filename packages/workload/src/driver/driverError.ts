import { CodedError, codedErrorGuard } from '@monsoon/util';

/** Why the load driver could not run, or could not talk to the cluster. */
export enum DriverErrorCode {
  /** A client or miner endpoint that is neither `host:port` nor an http(s) URL. */
  BadEndpoint = 'BAD_ENDPOINT',
  /** The miner did not stream its head block in time, or its stream failed before the run began. */
  MinerUnavailable = 'MINER_UNAVAILABLE',
  /** A client answered something that is not a SendTransactions/JSON-RPC answer for the request sent. */
  BadResponse = 'BAD_RESPONSE',
  /** A `/metrics` endpoint could not be read. */
  MetricsUnavailable = 'METRICS_UNAVAILABLE',
}

/** The load driver's error: a code plus structured metadata (option errors are {@link WorkloadError}s). */
export class DriverError extends CodedError<DriverErrorCode> {}

/** True when `e` is a DriverError, optionally of the given code. */
export const isDriverError = codedErrorGuard(DriverError);
