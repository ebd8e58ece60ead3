export { fundedGenesis, genesisJson, writeGenesis } from './genesisFile.js';
export { Prng } from './prng.js';
export {
  type ExitInfo,
  isAlive,
  killAll,
  killLeftovers,
  type Listening,
  type LogLine,
  type Role,
  RoleProcess,
  requireBuiltCli,
  roleCli,
  runRoleToExit,
  spawnRole,
  startRole,
} from './roleProcess.js';
export { logLines, makeTmpDir, removeDir, tempDir } from './tempDir.js';
export { rejection, thrown } from './thrown.js';
export { DEFAULT_UNTIL_INTERVAL_MS, type UntilOptions, until } from './until.js';
