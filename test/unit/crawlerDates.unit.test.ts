import assert from 'node:assert/strict';
import { isoTimestamps } from '../../services/crawler/dates.ts';
import { Rng } from '../../services/crawler/prng.ts';

describe('crawler dates', () => {
  it('writes the timestamps toISOString writes, a millisecond apart across second boundaries', () => {
    const timestamp = isoTimestamps();
    const start = Date.parse('2026-11-14T06:00:00Z') - 1500;
    for (let ms = start; ms < start + 5000; ms++) assert.equal(timestamp(ms), new Date(ms).toISOString());
  });

  it('writes the timestamps toISOString writes for instants in any order, before 1970 and past 9999', () => {
    const timestamp = isoTimestamps();
    const rng = new Rng(3);
    const edges = [0, -1, -999, -1000, -1001, 999, 1000, 1001, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_001, 8.64e15, -8.64e15];
    for (const ms of edges) assert.equal(timestamp(ms), new Date(ms).toISOString(), String(ms));
    for (let n = 0; n < 20_000; n++) {
      // Jumps of any size, and runs that stay within a second.
      const ms = n % 4 === 0 ? Math.floor((rng.next() - 0.5) * 1e15) : (edges[n % edges.length] as number) + rng.int(-2000, 2000);
      if (Math.abs(ms) > 8.64e15) continue;
      assert.equal(timestamp(ms), new Date(ms).toISOString(), String(ms));
    }
  });
});
