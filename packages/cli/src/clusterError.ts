import { CodedError } from '@monsoon/dsm-tree';

/** Why a cluster refused to start, or stopped being whole. */
export enum ClusterErrorCode {
  /** A topology file that is not valid JSON, has an unknown key, or a value out of range. */
  BadTopology = 'BAD_TOPOLOGY',
  /** A {@link ClusterOptions} value out of range, or a missing file. */
  BadOptions = 'BAD_OPTIONS',
  /** A role's CLI is not built (`npm run build`). */
  NotBuilt = 'NOT_BUILT',
  /** A process exited when nobody asked it to (during start or later); the message carries its log tail. */
  ProcessExited = 'PROCESS_EXITED',
  /** A process did not print `listening` in time; the message carries its log tail. */
  StartTimeout = 'START_TIMEOUT',
  /** The start was aborted through its `signal` (Ctrl-C during start). */
  Aborted = 'ABORTED',
  /** toxiproxy, which emulates the regions of a geo topology, refused or failed a request. */
  RegionLink = 'REGION_LINK',
}

/** The one error type of the cluster: a code plus structured metadata. */
export class ClusterError extends CodedError<ClusterErrorCode> {}

/** True when `e` is a ClusterError, optionally of the given code. */
export function isClusterError(e: unknown, code?: ClusterErrorCode): e is ClusterError {
  return e instanceof ClusterError && (code === undefined || e.code === code);
}
