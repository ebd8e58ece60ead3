export { type ChainRules, defaultChainRules, HARDFORK, makeCommon } from './chain.js';
export { ExecutionError, ExecutionErrorCode, isExecutionError } from './executionError.js';
