/**
 * Text normalisation shared by indexing and querying, so both sides see the same terms:
 * case- and accent-insensitive (NFKD, combining marks stripped), apostrophes dropped inside
 * words ("Schindler's" -> "schindlers", the same whether or not the user types the apostrophe),
 * except after an elided article or preposition of French or Italian, where the apostrophe
 * separates words ("d'Amélie" -> "d amelie", "L'Auberge" -> "l auberge", "dell'amore" ->
 * "dell amore": the user types "amelie", and a word glued to its article was found only as a
 * typo of it), everything that is not a letter or digit separates words.
 *
 * A change here (or in indexTerms, extraWords) changes the text an OpenSearch index holds: an index
 * written before keeps the old text (its titles still match as before) until it is rebuilt
 * under a new prefix (docs/operations.md); say so in the release notes.
 */

/** Letters NFKD does not decompose but users type without their stroke or ligature. */
const FOLD: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i', ħ: 'h',
};
const FOLD_RE = /[ßæœøđðłþıħ]/g;
const MARKS_RE = /\p{M}+/gu;
const HANGUL_JAMO_RE = /[\u1100-\u11ff]/u;
const APOSTROPHES_RE = /['’ʼ`´]/g;
/**
 * An elided word at the start of a word, before its apostrophe and a letter: French c' d' j' l'
 * m' n' qu' s' t' (and jusqu' lorsqu' puisqu'), Italian dell' nell' dall' sull' all' un'. Not
 * o' (O'Brien) nor a letter inside a word (Schindler's, don't).
 */
const ELISION_RE = /(?<![\p{L}\p{N}])(c|d|j|l|m|n|s|t|qu|jusqu|lorsqu|puisqu|dell|nell|dall|sull|all|un)['’ʼ`´](?=\p{L})/gu;
const SEPARATORS_RE = /[^\p{L}\p{N}]+/u;
/**
 * An ampersand standing as a word ("Fast & Furious", "Law & Order") is "and": users type both,
 * and a title written with "and" ("Pride and Prejudice") is keyed the same as one written with
 * "&". Inside a word ("AT&T", "R&B") it separates as any symbol does.
 */
const AMPERSAND_RE = /(?<!\S)&(?!\S)/g;

/** Lower-cased, accent-free text with apostrophes removed and a lone "&" as "and" (other word separators kept as they are). */
export function normalizeText(text: string): string {
  const bare = text.normalize('NFKD').replace(MARKS_RE, '');
  // NFKD splits a Hangul syllable into its letters (jamo), which are not marks: composed again,
  // so a Korean word's pairs (cjkWords) are of syllables, as the user types them.
  return (HANGUL_JAMO_RE.test(bare) ? bare.normalize('NFC') : bare)
    .toLowerCase()
    .replace(FOLD_RE, (c) => FOLD[c] ?? c)
    .replace(ELISION_RE, '$1 ')
    .replace(APOSTROPHES_RE, '')
    .replace(AMPERSAND_RE, 'and');
}

/** The normalised words of a text, in order (a run of CJK characters as its bigrams: cjkWords). */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  for (const token of normalizeText(text).split(SEPARATORS_RE)) {
    if (token.length === 0) continue;
    if (CJK_TEST_RE.test(token)) words.push(...cjkWords(token));
    else words.push(token);
  }
  return words;
}

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK_TEST_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS_RE = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)|([^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/gu;

/**
 * The words of a token holding CJK characters: each run of them as its overlapping bigrams
 * ("静かな港" -> 静か, かな, な港; a lone character stays whole), other runs as they are. Japanese
 * and Chinese titles have no spaces, so a title was one word and a word of it ("港", "かな港")
 * found nothing in-process, where OpenSearch's standard analyzer splits such text into
 * characters. Bigrams on both sides, as Lucene's CJK analyzer makes them: a query of two
 * characters or more matches the titles holding it, in order, anywhere.
 */
export function cjkWords(token: string): string[] {
  const words: string[] = [];
  for (const m of token.matchAll(CJK_RUNS_RE)) {
    if (m[2] !== undefined) {
      words.push(m[2]);
      continue;
    }
    const chars = [...(m[1] as string)];
    if (chars.length === 1) words.push(chars[0] as string);
    for (let i = 0; i + 1 < chars.length; i += 1) words.push(`${chars[i]}${chars[i + 1]}`);
  }
  return words;
}

const WHITESPACE_RE = /\s+/u;
/** Words of one run joined into one indexed word, at most: a longer run is not a word anyone types. */
const MAX_JOINED_WORDS = 6;

/**
 * The words a title is indexed under: its words (tokenize), then each run of words it writes
 * without a space between them (joined by a hyphen, dots, an apostrophe split off) also as one
 * word: "Spider-Man" is found by "spiderman", "X-Men" by "xmen", "E.T." by "et", "WALL-E" by
 * "walle", and "d'Amélie" by "damelie" as before elisions were split. Users type such names
 * both ways, and a query word is never looked up as two. Then the other forms of its numbers
 * (numeralForms: "Rocky II" by "rocky 2"). For indexing only: a query's words and a title's
 * keys (titleKey) are tokenize's.
 */
export function indexTerms(text: string): string[] {
  const words = tokenize(text);
  return [...words, ...extraWords(text, words)];
}

/**
 * The words a name is indexed under beyond its own (indexTerms): its joined runs, then the
 * other forms of its numbers (numeralForms), then the characters of its CJK pairs
 * (cjkCharacters). Each is a whole word of the name for MATCH_EVERY_WORD on both engines: the
 * OpenSearch title fields hold them, the in-process entry keeps them per key.
 */
export function extraWords(text: string, words: readonly string[] = tokenize(text)): string[] {
  const runs = joinedRuns(text);
  return [...runs, ...numeralForms(words, runs), ...cjkCharacters(words)];
}

/**
 * Each character of the CJK pairs among a name's words (cjkWords), once: a query of one
 * character ("港", harbour; "夜", night: words of their own in Chinese and Japanese) finds the
 * titles that hold it, as OpenSearch's standard analyzer finds them.
 */
export function cjkCharacters(words: readonly string[]): string[] {
  const out = new Set<string>();
  for (const word of words) {
    if (!CJK_TEST_RE.test(word)) continue;
    const chars = [...word];
    // A pair cjkWords made; a lone character is a word already.
    if (chars.length === 2 && CJK_TEST_RE.test(chars[0] as string) && CJK_TEST_RE.test(chars[1] as string)) for (const c of chars) out.add(c);
  }
  return [...out];
}

/** Numbers 1-20 as users write them in a title: Roman, Arabic, English. */
const ROMAN = ['i', 'ii', 'iii', 'iv', 'v', 'vi', 'vii', 'viii', 'ix', 'x', 'xi', 'xii', 'xiii', 'xiv', 'xv', 'xvi', 'xvii', 'xviii', 'xix', 'xx'];
const NAMED = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];
const NUMERALS = new Map<string, readonly string[]>();
for (let n = 1; n <= 20; n += 1) {
  const forms = [String(n), ROMAN[n - 1] as string, NAMED[n - 1] as string];
  for (const form of forms) NUMERALS.set(form, forms.filter((f) => f !== form));
}
// "I" and "one" are mostly words ("I, Robot", "The One"): each is "1" too, not the other
// (indexed as "i", The One came second for "i robot").
NUMERALS.set('i', ['1']);
NUMERALS.set('one', ['1']);

/**
 * The other forms of the numbers 1 to 20 among `words` (Roman, Arabic, English), those not
 * already among them or `also`: "Rocky II" is also indexed under "2" and "two", "Ocean's
 * Eleven" under "11" and "xi", "Star Wars Ep. V" under "5", so "rocky 2", "oceans 11" and
 * "star wars 5" name them; users type a sequel's number however it comes to them. A letter that
 * is also a numeral ("I, Robot", "V for Vendetta", "Malcolm X") gains a number nobody types
 * with its other words: a harmless extra term.
 */
export function numeralForms(words: readonly string[], also: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const word of words) {
    const forms = NUMERALS.get(word);
    if (forms === undefined) continue;
    for (const form of forms) if (!words.includes(form) && !also.includes(form) && !out.includes(form)) out.push(form);
  }
  return out;
}

/**
 * The runs of `text` between spaces, each with its words and, when it writes two to
 * MAX_JOINED_WORDS words without a space between them, those words joined into one. A CJK run's
 * words are its pairs, not words written apart: never joined. The one rule joinedRuns and
 * joinedKey share.
 */
function spaceRuns(text: string): Array<{ words: string[]; joined: string | null }> {
  return text.split(WHITESPACE_RE).map((run) => {
    const words = tokenize(run);
    const joinable = words.length >= 2 && words.length <= MAX_JOINED_WORDS && !CJK_TEST_RE.test(run);
    return { words, joined: joinable ? words.join('') : null };
  });
}

/** The runs of words `text` writes without a space between them, each joined into one word (indexTerms). */
export function joinedRuns(text: string): string[] {
  const runs: string[] = [];
  for (const { joined } of spaceRuns(text)) if (joined !== null) runs.push(joined);
  return runs;
}

/**
 * A name's titleKey with each run it writes without a space joined into one word, as indexTerms
 * joins it: "xmen the last stand" for "X-Men: The Last Stand", "et the extraterrestrial" for
 * "E.T. the Extra-Terrestrial"; '' when the name has no such run (its key is titleKey's). A
 * title is compared with a whole query under both keys, so "xmen" is X-Men itself (MATCH_EXACT),
 * ahead of the X-Men films whose name it only begins, as "x men" is.
 */
export function joinedKey(text: string): string {
  const runs = spaceRuns(text);
  if (runs.every((r) => r.joined === null)) return '';
  return titleKey(runs.flatMap((r) => (r.joined === null ? r.words : [r.joined])));
}

/**
 * The keys a title with these names (`words`: tokenize's of each) is compared under: each
 * name's titleKey, distinct and in the order of the names, then their joinedKeys that are not
 * among them. Both adapters index
 * these (the in-process entry's `keys`, the OpenSearch document's `keys` field), so a key
 * decides MATCH_EXACT, MATCH_BEGINS and MATCH_NEAR_EXACT alike on both.
 */
export function titleKeysOf(names: readonly string[], words: ReadonlyArray<readonly string[]> = names.map(tokenize)): string[] {
  const keys = new Set<string>();
  for (const w of words) keys.add(titleKey(w));
  for (const name of names) keys.add(joinedKey(name));
  keys.delete('');
  return [...keys];
}

/**
 * Leading articles a user commonly leaves out ("Lord of the Rings" for "The Lord of the Rings"),
 * in the languages of the catalog's biggest markets. Used only to compare a query with a whole
 * title; articles stay indexed and searchable as words.
 */
const LEADING_ARTICLES = new Set([
  'the', 'a', 'an', 'le', 'la', 'les', 'l', 'un', 'une', 'der', 'die', 'das', 'ein', 'eine',
  'el', 'los', 'las', 'il', 'lo', 'gli', 'de', 'het', 'een', 'o', 'os', 'as',
]);

/** Words joined by one space, without a leading article (unless the article is all there is). */
export function titleKey(words: readonly string[]): string {
  const first = words[0];
  const rest = first !== undefined && words.length > 1 && LEADING_ARTICLES.has(first) ? words.slice(1) : words;
  return rest.join(' ');
}

/**
 * Longest query word that is looked up with typos; a longer one must match exactly (or as a
 * prefix). Typo lookups cost more than linear time in a word's length: the in-process index
 * searches every one-swap variant of a word within one typo and looks up every two-swap
 * variant (n words of n characters, then n^2 of them: an 800-character word took 21 s and
 * 1.6 GB), and each MiniSearch fuzzy lookup allocates a matrix of the word's length squared.
 * Capping the length makes the typo work of one word a constant, so a query costs time linear
 * in its length. 24 is far above the longest word of the sample's titles (14) and covers the
 * long compounds of German or Finnish titles, whose typos are still forgiven.
 */
export const MAX_TYPO_WORD_CHARS = 24;

/**
 * Typos tolerated in a query word: none below 4 characters (a 3-letter word is one edit away
 * from too many others), 1 from 4 ("In Cold Bood"), 2 from 9 — the same thresholds as
 * OpenSearch `fuzziness: AUTO:4,9` — and none above MAX_TYPO_WORD_CHARS. A 4-letter typo has
 * many neighbours ("bood": blood, good, wood, book), but the other words of the query and the
 * lower weight of a fuzzy match keep the intended title on top: 4-letter typos went from 64 %
 * to 100 % top-3 on the quality set without a loss in any other category.
 */
export function maxTypos(term: string): number {
  const n = [...term].length;
  return n > MAX_TYPO_WORD_CHARS ? 0 : n >= 9 ? 2 : n >= 4 ? 1 : 0;
}

/**
 * Longest whole query (titleKey, in characters) compared with whole titles: whether it begins
 * one (ranking.ts MATCH_BEGINS) or is one within typos (titleTypos, MATCH_NEAR_EXACT). Far
 * above real titles (the sample's longest is 80 characters); it bounds the comparison on both
 * engines: a string distance per candidate in-process, and in OpenSearch an automaton the
 * length of the key in UTF-8, which it refuses past 1,000 states.
 */
export const MAX_WHOLE_QUERY_CHARS = 120;

/**
 * Typos tolerated between a whole query and a whole title (their titleKeys, spaces included):
 * as for a word, 1 from 4 characters and 2 from 9 (OpenSearch `fuzziness` allows at most 2
 * anyway), and none above MAX_WHOLE_QUERY_CHARS.
 */
export function titleTypos(key: string): number {
  const n = [...key].length;
  return n > MAX_WHOLE_QUERY_CHARS ? 0 : n >= 9 ? 2 : n >= 4 ? 1 : 0;
}

/**
 * The words one adjacent transposition away ("titnaic" -> "titanic", ...). MiniSearch's fuzzy
 * search counts edits by Levenshtein distance, where a swap costs 2; searching these variants
 * with one typo less makes a swap cost 1, as in Damerau/OSA distance (and in OpenSearch).
 */
export function transpositions(term: string): string[] {
  const chars = [...term];
  const out = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) {
    if (chars[i] === chars[i + 1]) continue;
    const swapped = chars.slice();
    swapped[i] = chars[i + 1] as string;
    swapped[i + 1] = chars[i] as string;
    out.add(swapped.join(''));
  }
  out.delete(term);
  return [...out];
}

/**
 * Words so common in titles that, as query words, they would make nearly every title a
 * candidate ("the" is in a third of them) while adding almost nothing to BM25. A query looks
 * up only its other words (all of them when it has nothing else); the full query, stop words
 * included, still decides whole-title and phrase matches. English plus the articles and
 * prepositions of the biggest catalog languages.
 */
const STOP_WORDS = new Set([
  'the', 'a', 'an', 'of', 'and', 'in', 'on', 'to', 'for', 'at', 'by', 'with', 'from', 'or',
  'le', 'la', 'les', 'l', 'du', 'des', 'et', 'der', 'die', 'das', 'und', 'den', 'dem', 'el', 'los',
  'las', 'y', 'il', 'lo', 'gli', 'di', 'e', 'het', 'een', 'o',
  // Elided words split from the next one (ELISION_RE): "d'amelie" looks up "amelie".
  'd', 'qu', 'dell', 'nell', 'dall', 'sull',
]);

/**
 * The query words to look up: the non-stop words, plus the last word whatever it is (it may be
 * a prefix still being typed: "the" of "theory"). All words when every word is a stop word.
 */
export function lookupWords(words: readonly string[]): string[] {
  const kept = words.filter((w, i) => !STOP_WORDS.has(w) || i === words.length - 1);
  return kept.some((w) => !STOP_WORDS.has(w)) ? kept : words.slice();
}
