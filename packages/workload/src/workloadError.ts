import { CodedError, codedErrorGuard } from '@monsoon/util';

/** Why the workload library refused a request. */
export enum WorkloadErrorCode {
  /** An option out of range or inconsistent with another (a share above 1, fewer than 2 accounts). */
  BadOptions = 'BAD_OPTIONS',
  /** An account index at or above the set's count, or not an integer. */
  BadIndex = 'BAD_INDEX',
  /**
   * An account cache file that is not what its name promises (wrong size, header, checksum or
   * keys). {@link AccountSet.create} catches it and rebuilds the file.
   */
  BadCache = 'BAD_CACHE',
}

/** The one error type of the workload package: a code plus structured metadata. */
export class WorkloadError extends CodedError<WorkloadErrorCode> {}

/** True when `e` is a WorkloadError, optionally of the given code. */
export const isWorkloadError = codedErrorGuard(WorkloadError);
