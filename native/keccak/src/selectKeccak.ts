import { jsKeccak } from './jsKeccak.js';
import type { Keccak } from './types.js';

/**
 * Picks the backend for `mode` (the MONSOON_KECCAK environment variable): unset or empty
 * prefers native and falls back to JS; "js" forces JS; "native" requires the addon and
 * throws if it did not load, rather than silently running several times slower.
 */
export function selectKeccak(
  mode: string | undefined,
  native: Keccak | undefined,
  loadError: unknown,
): Keccak {
  switch (mode ?? '') {
    case '':
      return native ?? jsKeccak;
    case 'js':
      return jsKeccak;
    case 'native': {
      if (native !== undefined) return native;
      const reason = loadError instanceof Error ? loadError.message : String(loadError);
      throw new Error(
        `MONSOON_KECCAK=native, but the Keccak addon could not be loaded (${reason}); build it with \`npm run build:native\``,
        { cause: loadError },
      );
    }
    default:
      throw new Error(`MONSOON_KECCAK must be "native", "js" or unset, got "${mode}"`);
  }
}
