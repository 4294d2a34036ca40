import assert from 'node:assert/strict';
import { MAX_TYPO_WORD_CHARS, cjkWords, indexTerms, joinedKey, joinedRuns, lookupWords, maxTypos, numeralForms, titleKey, titleKeysOf, titleTypos, tokenize, transpositions } from '../../infra/search/normalize.ts';
import { beginsKey, compareRanked, holdsEveryWord, holdsKey, holdsPhrase, nearKey, osaDistance, phraseFactor, popularityFactor, topK, type RankInput } from '../../infra/search/ranking.ts';
import { prng } from './searchQualityCatalog.ts';

describe('search text normalisation', function () {
  it('lower-cases, strips accents and folds letters NFKD keeps', function () {
    assert.deepEqual(tokenize('Amélie — LÉON: Straße, Ærø / Łódź'), ['amelie', 'leon', 'strasse', 'aero', 'lodz']);
  });

  it("drops apostrophes inside words so \"Schindler's\" and \"Schindlers\" are one word", function () {
    assert.deepEqual(tokenize("Schindler's List"), ['schindlers', 'list']);
    assert.deepEqual(tokenize('Schindler’s'), ['schindlers']);
  });

  it('separates an elided French or Italian article from its word, and only that', function () {
    assert.deepEqual(tokenize("Le Fabuleux destin d'Amélie Poulain"), ['le', 'fabuleux', 'destin', 'd', 'amelie', 'poulain']);
    assert.equal(titleKey(tokenize("L'Auberge espagnole")), 'auberge espagnole');
    assert.equal(titleKey(tokenize('L’Ultimo bacio')), 'ultimo bacio');
    assert.deepEqual(tokenize("Qu'est-ce qu'on a fait au Bon Dieu?"), ['qu', 'est', 'ce', 'qu', 'on', 'a', 'fait', 'au', 'bon', 'dieu']);
    assert.deepEqual(tokenize("Canzone dell'amore"), ['canzone', 'dell', 'amore']);
    // English: a letter inside a word, O', and an apostrophe not before a letter stay as they were.
    assert.deepEqual(tokenize("O'Brother, Where Art Thou? Don't Look Now, Ocean's 11, Rock 'n' Roll"), ['obrother', 'where', 'art', 'thou', 'dont', 'look', 'now', 'oceans', '11', 'rock', 'n', 'roll']);
  });

  it('reads an ampersand standing as a word as "and", and one inside a word as a separator', function () {
    assert.deepEqual(tokenize('Fast & Furious'), ['fast', 'and', 'furious']);
    assert.equal(titleKey(tokenize('Law & Order')), titleKey(tokenize('law and order')));
    assert.deepEqual(tokenize('&'), ['and']);
    assert.deepEqual(tokenize('AT&T, R&B & Soul'), ['at', 't', 'r', 'b', 'and', 'soul']);
    assert.deepEqual(indexTerms('AT&T'), ['at', 't', 'att']);
  });

  it('splits a run of CJK characters into its bigrams, and indexes its characters too', function () {
    assert.deepEqual(tokenize('静かな港'), ['静か', 'かな', 'な港']);
    assert.deepEqual(tokenize('港'), ['港']);
    // Other scripts in the token stay whole; kana lose their voicing marks as accents go (NFKD).
    assert.deepEqual(tokenize('ポケモン2 The Movie'), ['ホケ', 'ケモ', 'モン', '2', 'the', 'movie']);
    assert.deepEqual(cjkWords('x港の灯y'), ['x', '港の', 'の灯', 'y']);
    assert.deepEqual(indexTerms('港の港'), ['港の', 'の港', '港', 'の']);
    // Nothing of a CJK run is joined or keyed twice.
    assert.deepEqual(joinedRuns('静かな港'), []);
    assert.deepEqual(titleKeysOf(['静かな港']), ['静か かな な港']);
    assert.deepEqual(tokenize('항구의 불빛'), ['항구', '구의', '불빛']);
  });

  it('indexes a title under its words and each run written without a space as one word', function () {
    assert.deepEqual(indexTerms('Spider-Man 2'), ['spider', 'man', '2', 'spiderman', 'ii', 'two']);
    assert.deepEqual(indexTerms('E.T. the Extra-Terrestrial'), ['e', 't', 'the', 'extra', 'terrestrial', 'et', 'extraterrestrial']);
    assert.deepEqual(indexTerms("Le Fabuleux destin d'Amélie"), ['le', 'fabuleux', 'destin', 'd', 'amelie', 'damelie']);
    assert.deepEqual(indexTerms('The Matrix'), ['the', 'matrix']);
    // A run of more words than anyone types as one adds nothing.
    assert.deepEqual(indexTerms('a.b.c.d.e.f.g'), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('indexes the numbers 1 to 20 of a title under their other forms, Roman, Arabic and English', function () {
    assert.deepEqual(indexTerms('Rocky II'), ['rocky', 'ii', '2', 'two']);
    assert.deepEqual(indexTerms("Ocean's Eleven"), ['oceans', 'eleven', '11', 'xi']);
    assert.deepEqual(numeralForms(['star', 'wars', 'ep', 'v']), ['5', 'five']);
    // A form the title writes already is not added again; 21 and above are left alone.
    assert.deepEqual(numeralForms(['2', 'ii']), ['two']);
    assert.deepEqual(numeralForms(['xxi', '21', 'twentyone', '0']), []);
    // "I" and "one" are each 1, not each other.
    assert.deepEqual(numeralForms(['i', 'robot']), ['1']);
    assert.deepEqual(numeralForms(['the', 'one']), ['1']);
    assert.deepEqual(numeralForms(['1']), ['i', 'one']);
  });

  it('keys a title under each name, and again with its runs written without a space joined', function () {
    assert.equal(joinedKey('X-Men: The Last Stand'), 'xmen the last stand');
    assert.equal(joinedKey('The X-Files'), 'xfiles');
    assert.equal(joinedKey('E.T. the Extra-Terrestrial'), 'et the extraterrestrial');
    assert.equal(joinedKey('The Matrix'), '');
    assert.deepEqual(titleKeysOf(['X-Men', 'X-Men']), ['x men', 'xmen']);
    // Plain keys first, in the names' order (the in-process entry's runs follow that order).
    assert.deepEqual(titleKeysOf(['Spider-Man 2', 'Spider-Man II', 'Spiderman 2']), ['spider man 2', 'spider man ii', 'spiderman 2', 'spiderman ii']);
    assert.deepEqual(titleKeysOf(['The Matrix', '!!!']), ['matrix']);
  });

  it('says whether one name holds every word whole, a joined run of that name counting as a word', function () {
    assert.equal(holdsEveryWord('godfather part ii', ['godfather', 'ii']), true);
    assert.equal(holdsEveryWord('godfather part iii', ['godfather', 'ii']), false);
    // Words of two names do not add up.
    assert.equal(holdsEveryWord('harbor lights\ndie nacht', ['harbor', 'nacht']), false);
    // Runs per name, in the order of the keys.
    assert.equal(holdsEveryWord('x men\nmutants', ['xmen'], 'xmen\n'), true);
    assert.equal(holdsEveryWord('mutants\nx men', ['xmen'], '\nxmen'), true);
    assert.equal(holdsEveryWord('mutants\nx men', ['xmen', 'mutants'], '\nxmen'), false);
    assert.equal(holdsEveryWord('spider man 2', ['spiderman', '2'], 'spiderman'), true);
    assert.equal(holdsEveryWord('spider man 2', ['spiderma'], 'spiderman'), false);
  });

  it('keys a title without its leading article', function () {
    assert.equal(titleKey(tokenize('The Lord of the Rings')), 'lord of the rings');
    assert.equal(titleKey(tokenize('Lord of the Rings')), 'lord of the rings');
    assert.equal(titleKey(tokenize('The')), 'the');
  });

  it('allows 0 typos below 4 characters, 1 from 4 and 2 from 9', function () {
    assert.deepEqual(['her', 'jaws', 'alien', 'titanic', 'predator', 'inception'].map(maxTypos), [0, 1, 1, 1, 1, 2]);
  });

  it('allows a whole query the same typos against a whole title, up to MAX_WHOLE_QUERY_CHARS', function () {
    assert.deepEqual(['her', 'glry', 'the twon', 'cold bood', 'a'.repeat(120), 'a'.repeat(121)].map(titleTypos), [0, 1, 1, 2, 2, 0]);
  });

  it('allows no typo above MAX_TYPO_WORD_CHARS, so the typo work of one word is bounded', function () {
    assert.equal(MAX_TYPO_WORD_CHARS, 24);
    assert.equal(maxTypos('a'.repeat(24)), 2);
    assert.equal(maxTypos('a'.repeat(25)), 0);
    assert.equal(maxTypos('a'.repeat(4000)), 0);
  });

  it('lists the adjacent transpositions of a word, without the word itself', function () {
    assert.deepEqual(transpositions('abca').sort(), ['abac', 'acba', 'baca']);
    assert.deepEqual(transpositions('aa'), []);
  });

  it('looks up the words that are not stop words, plus the last word, or all words when all are stop words', function () {
    assert.deepEqual(lookupWords(['lord', 'of', 'the', 'rings']), ['lord', 'rings']);
    assert.deepEqual(lookupWords(['lord', 'of', 'the']), ['lord', 'the']);
    assert.deepEqual(lookupWords(['the', 'of']), ['the', 'of']);
  });
});

describe('search ranking', function () {
  const r = (id: string, matchClass: number, available: boolean, relevance: number, popularity = 0): RankInput => ({
    id, matchClass, available, relevance, popularity,
  });

  it('orders by match class, then availability, then relevance, then popularity, then id', function () {
    const items = [
      r('a', 2, false, 9),
      r('b', 2, true, 1),
      r('c', 3, false, 1),
      r('d', 2, true, 5, 1),
      r('e', 2, true, 5, 7),
      r('f', 1, true, 99),
      r('g', 2, true, 5, 7),
    ];
    assert.deepEqual(items.sort(compareRanked).map((i) => i.id), ['c', 'e', 'g', 'd', 'b', 'a', 'f']);
  });

  it('counts an adjacent transposition as one edit, and gives up past the bound', function () {
    assert.equal(osaDistance('twon', 'town', 2), 1);
    assert.equal(osaDistance('glry', 'glory', 2), 1);
    assert.equal(osaDistance('in cold bood', 'in cold blood', 2), 1);
    assert.equal(osaDistance('abcdef', 'badcfe', 2), 3);
    assert.equal(osaDistance('a', 'abcdefgh', 2), 3);
    assert.equal(osaDistance('élan', 'elan', 1), 1);
  });

  it('tells a query that begins a title, and one within typos of a whole title', function () {
    assert.ok(beginsKey('matrix\nthe matrix', 'ma'));
    assert.ok(beginsKey('mad max\nmatrix', 'matrix re') === false);
    assert.ok(beginsKey('alpha\nmatrix reloaded', 'matrix re'));
    assert.ok(!beginsKey('iron man', 'ma'));
    assert.ok(nearKey('twon', ['town'], 1));
    assert.ok(!nearKey('twon', ['the town'], 1));
    assert.ok(!nearKey('twon', ['town'], 0));
  });

  it('tells a key among packed title keys without taking a key that merely begins with it', function () {
    assert.ok(holdsKey('matrix', 'matrix'));
    assert.ok(holdsKey('matrix\nthe matrix', 'the matrix'));
    assert.ok(holdsKey('matrix reloaded\nmatrix\nx', 'matrix'));
    assert.ok(!holdsKey('matrix reloaded', 'matrix'));
    assert.ok(!holdsKey('alpha\nmatrix reloaded', 'matrix'));
    assert.ok(!holdsKey('the matrix', 'matrix'));
    assert.ok(!holdsKey('matrix', ''));
  });

  it('tells a phrase of packed title keys as phraseFactor does with the keys apart', function () {
    const keys = ['lord of the rings the two towers', 'herr der ringe', 'ring', 'rings of power'];
    for (const query of ['lord of the rings', 'the two towers', 'towers', 'tower', 'ring', 'rings', 'ringe', 'herr der', 'of power', 'rings the', 'gs of', '']) {
      assert.equal(holdsPhrase(keys.join('\n'), query), phraseFactor(query, keys).factor > 1, query);
    }
    assert.ok(!holdsPhrase('ring\nrings', 'ring\nrings'.slice(0, 7)), 'no phrase across two keys');
  });

  it('boosts a whole-title match x2 and a phrase inside the title x1.5', function () {
    assert.deepEqual(phraseFactor('lord of the rings', ['lord of the rings']), { exact: true, factor: 2 });
    assert.deepEqual(phraseFactor('lord of the rings', ['lord of the rings the two towers']), { exact: false, factor: 1.5 });
    assert.deepEqual(phraseFactor('lord rings', ['lord of the rings']), { exact: false, factor: 1 });
    assert.deepEqual(phraseFactor('ring', ['lord of the rings']), { exact: false, factor: 1 });
  });

  it('lets popularity add at most the configured share of relevance', function () {
    assert.equal(popularityFactor(0, 1000, 0.2), 1);
    assert.equal(popularityFactor(1000, 1000, 0.2), 1.2);
    assert.equal(popularityFactor(5000, 1000, 0.2), 1.2);
    assert.equal(popularityFactor(10, 0, 0.2), 1);
    const mid = popularityFactor(31, 1000, 0.2);
    assert.ok(mid > 1 && mid < 1.2);
  });

  it('selects the same first k items as a full sort', function () {
    const rnd = prng(5);
    const items = Array.from({ length: 500 }, (_, i) =>
      r(`id${i}`, 1 + Math.floor(rnd() * 3), rnd() < 0.5, Math.floor(rnd() * 20), Math.floor(rnd() * 3)),
    );
    const sorted = items.slice().sort(compareRanked);
    for (const k of [0, 1, 20, 100, 124, 125, 600]) {
      assert.deepEqual(topK(items, k, compareRanked), sorted.slice(0, k), `k=${k}`);
    }
  });
});
