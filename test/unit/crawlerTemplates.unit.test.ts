/**
 * The crawler's template filling splits each template once and fills it by concatenation; the
 * regular expression it replaced stays here as the definition it must agree with.
 */
import assert from 'node:assert/strict';
import { Rng } from '../../services/crawler/prng.ts';
import { fill, templateParts } from '../../services/crawler/translate.ts';
import { LOCALIZED, TRANSLATION_LANGUAGES } from '../../services/crawler/words.ts';

function fillByRegex(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? String(values[key]) : whole));
}

const VALUES: Record<string, string | number> = { title: 'Le port', year: 1999, a: '$1 {b}', b: '', a_1: 'x', Z9: 'zed' };

describe('crawler templates', () => {
  it('fills the localized overview templates as the regular expression does', () => {
    for (const lang of TRANSLATION_LANGUAGES) {
      for (const template of [...LOCALIZED[lang].movie, ...LOCALIZED[lang].show]) {
        assert.equal(fill(template, VALUES), fillByRegex(template, VALUES), template);
      }
    }
  });

  it('finds the placeholders the regular expression finds in 20,000 generated templates', () => {
    // Braces unbalanced, nested and empty, names with digits and `_`, names without a value,
    // non-word and non-ASCII code units inside and around them.
    const pieces = ['{', '}', '{a}', '{b}', '{a_1}', '{Z9}', '{title}', '{year}', '{none}', '{constructor}', 'a', '_', '9', ' ', '-', 'é', '€', '$&', '{{', '}}'];
    const rng = new Rng(11);
    for (let n = 0; n < 20_000; n++) {
      let template = '';
      const length = rng.int(0, 12);
      for (let i = 0; i < length; i++) template += rng.pick(pieces);
      assert.equal(fill(template, VALUES), fillByRegex(template, VALUES), JSON.stringify(template));
    }
  });

  it('splits a template into literals and names, literals first and last', () => {
    assert.deepEqual(templateParts('{a}'), ['', 'a', '']);
    assert.deepEqual(templateParts('x{{a_1}}y{ b}{}'), ['x{', 'a_1', '}y{ b}{}']);
    assert.deepEqual(templateParts('no placeholder'), ['no placeholder']);
  });
});
