import { describe, expect, it } from '@jest/globals';
import { ClusterErrorCode, defaultTopology, shardGroups, storageLayout } from '@monsoon/cli';

/** The shard numbers a `--shards` spec names. */
function expand(spec: string): number[] {
  const [from, to = from] = spec.split('-').map(Number);
  return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
}

describe('shardGroups', () => {
  it('cuts the shards into contiguous, even groups that cover each shard once', () => {
    expect(shardGroups(16, 1)).toEqual(['0-15']);
    expect(shardGroups(16, 2)).toEqual(['0-7', '8-15']);
    expect(shardGroups(16, 3)).toEqual(['0-4', '5-9', '10-15']);
    expect(shardGroups(16, 16)).toEqual(Array.from({ length: 16 }, (_, i) => String(i)));
    for (const count of [16, 256]) {
      for (let groups = 1; groups <= 16; groups++) {
        const sizes = shardGroups(count, groups).map((s) => expand(s).length);
        expect(shardGroups(count, groups).flatMap(expand)).toEqual(
          Array.from({ length: count }, (_, i) => i),
        );
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('refuses more groups than shards', () => {
    expect(() => shardGroups(16, 17)).toThrow(
      expect.objectContaining({ code: ClusterErrorCode.BadTopology }),
    );
    expect(() => shardGroups(16, 0)).toThrow(/expected an integer in \[1, 16\], found 0/);
  });
});

describe('storageLayout', () => {
  it('gives the replicas of one group adjacent processes', () => {
    const storage = { ...defaultTopology.storage, processes: 6, replicas: 2 };
    expect(storageLayout(storage, 16)).toEqual(['0-4', '0-4', '5-9', '5-9', '10-15', '10-15']);
  });
});
