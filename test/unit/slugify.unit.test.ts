/**
 * slugify's pass over ASCII text must give the slug of slugifyUnicode, the normalizing path that
 * defines it (and that non-ASCII text still takes).
 */
import assert from 'node:assert/strict';
import { MAX_SLUG_CHARS, isCollectionSlug, slugify, slugifyUnicode } from '../../contracts/ids.ts';
import { Rng } from '../../services/crawler/prng.ts';

const ASCII_PIECES = ['a', 'Z', 'q', '0', '9', 'The', 'Land', ' ', '  ', '-', '--', '_', '&', ' & ', '.', "'", ':', '!', '/', '\t', '~', '\u007f', '@', '[', '`', '{'];
const OTHER_PIECES = ['é', 'É', 'ß', 'İ', 'Æ', 'ﬁ', '½', '東京', '\u0301', 'Ω', '\u00a0', '😀'];

function generated(rng: Rng, pieces: readonly string[], maxPieces: number): string {
  let text = '';
  const n = rng.int(0, maxPieces);
  for (let i = 0; i < n; i++) text += rng.pick(pieces);
  return text;
}

describe('slugify', () => {
  it('gives the slug of slugifyUnicode for 30,000 generated ASCII strings', () => {
    const rng = new Rng(5);
    for (let n = 0; n < 30_000; n++) {
      // Up to 60 pieces: some strings run past MAX_SLUG_CHARS, where the slug is cut.
      const text = generated(rng, ASCII_PIECES, n % 3 === 0 ? 60 : 8);
      assert.equal(slugify(text), slugifyUnicode(text), JSON.stringify(text));
    }
  });

  it('gives the slug of slugifyUnicode for 10,000 strings with non-ASCII characters', () => {
    const rng = new Rng(6);
    const pieces = [...ASCII_PIECES, ...OTHER_PIECES];
    for (let n = 0; n < 10_000; n++) {
      const text = generated(rng, pieces, 12);
      assert.equal(slugify(text), slugifyUnicode(text), JSON.stringify(text));
    }
  });

  it('joins words with single dashes, spells & as and, and cuts at MAX_SLUG_CHARS', () => {
    assert.equal(slugify('The Land Girls'), 'the-land-girls');
    assert.equal(slugify('  --Tom & Jerry--  '), 'tom-and-jerry');
    assert.equal(slugify('&Co&'), 'and-co-and');
    assert.equal(slugify('!!!'), 'untitled');
    assert.equal(slugify(''), 'untitled');
    assert.equal(slugify('Amélie'), 'amelie');
    assert.equal(slugify(`The ${'a'.repeat(MAX_SLUG_CHARS * 2)}`), `the-${'a'.repeat(MAX_SLUG_CHARS - 4)}`);
    assert.equal(isCollectionSlug(slugify('The Land Girls')), true);
  });

  it('never ends in a dash where the cut falls on one: every slug matches SLUG_PATTERN', () => {
    const word = 'a'.repeat(MAX_SLUG_CHARS - 1);
    assert.equal(slugify(`${word} b`), word);
    assert.equal(slugify(`${word} é`), word);
    assert.equal(slugifyUnicode(`${word} b`), word);
    const rng = new Rng(7);
    const pieces = [...ASCII_PIECES, ...OTHER_PIECES];
    for (let n = 0; n < 20_000; n++) {
      const text = generated(rng, n % 2 === 0 ? ASCII_PIECES : pieces, 60);
      assert.ok(isCollectionSlug(slugify(text)), `${JSON.stringify(text)} -> ${slugify(text)}`);
    }
  });
});
