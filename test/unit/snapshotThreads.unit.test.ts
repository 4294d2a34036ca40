import assert from 'node:assert/strict';
import { packCounts, unpackCounts } from '../../services/snapshot/buildThreads.ts';
import type { SeasonCounts } from '../../services/snapshot/rows.ts';

describe('the seasons counts between build threads', () => {
  it('arrive as the Map that was sent, ids of any code units included, after a structured clone', () => {
    const sent = new Map<string, SeasonCounts>([
      ['tv00000001', { seasons: 3, episodes: 24 }],
      ['', { seasons: 0, episodes: 0 }],
      // A lone high surrogate ending one id before a lone low surrogate starting the next.
      ['tv\ud83d', { seasons: 1, episodes: 8 }],
      ['\ude00tv', { seasons: 2, episodes: 16 }],
      ['tv😀', { seasons: 2147483647, episodes: -1 }],
      ['tv00000002', { seasons: 1, episodes: 0 }],
    ]);
    const received = unpackCounts(structuredClone(packCounts(sent)));
    assert.deepEqual([...received], [...sent]);
  });

  it('arrive empty when no show has seasons', () => {
    assert.deepEqual([...unpackCounts(structuredClone(packCounts(new Map())))], []);
  });
});
