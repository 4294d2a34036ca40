import assert from 'node:assert/strict';
import { Rng, weightTotal } from '../../services/crawler/prng.ts';

describe('crawler random draws', () => {
  it('draws the same indexes from weights with their total passed as with it summed per draw', () => {
    const shape = new Rng(9);
    for (let n = 0; n < 2_000; n++) {
      // Fractional weights, whose sum depends on its order, and zeros.
      const weights = Array.from({ length: shape.int(1, 40) }, () => (shape.chance(0.1) ? 0 : Math.pow(shape.next() * 100, 0.9)));
      const total = weightTotal(weights);
      const a = new Rng(n);
      const b = new Rng(n);
      for (let i = 0; i < 20; i++) assert.equal(a.weightedIndex(weights, total), b.weightedIndex(weights));
    }
  });
});
