/**
 * The search request for a SearchQuery: the semantics of the in-process adapter
 * (infra/search/inProcessSearch.ts, ranking.ts) expressed as one OpenSearch query, built
 * without scripts (the bare CI server has no painless).
 *
 * Matching: an OR over the query's lookup words (normalize.ts `lookupWords`: stop words left out
 * unless they are all there is or the last word). Each word matches exactly, within its typo
 * budget (`fuzziness: AUTO:4,9`: 0 typos below 4 characters, 1 from 4, 2 from 9, a
 * transposition counting as one, none above MAX_TYPO_WORD_CHARS: normalize.ts `maxTypos`) and,
 * for the last word from 2 characters, as a prefix.
 *
 * Order: ranking.ts's order is lexicographic (match class, then availability, then relevance,
 * then popularity); a score is one number, so the order is encoded in tiers of the score:
 *   whole-title match  +EXACT_BONUS   (titleKey of the query equals a titleKey of the title)
 *   every word matched +ALL_WORDS_BONUS
 *   whole title within typos (and every word matched) +NEAR_EXACT_BONUS (a fuzzy query on the
 *     title keys, `titleTypos` edits: the same distance as ranking.ts `nearKey`)
 *   available in the query's country +AVAILABLE_BONUS
 *   relevance: BM25 of the word matches plus a phrase bonus, x (1 + w * log10(1 + popularity))
 * or, for a title the query begins (a prefix query on the title keys), BEGINS_BONUS +
 * log10(1 + popularity), whichever is higher (dis_max),
 * and the sort then falls back to popularity and id. Tiers hold while relevance stays below
 * AVAILABLE_BONUS: queries are cut to MAX_WORDS lookup words, which keeps the relevance of
 * titles of a few words in the tens. Scores are 32-bit floats: at the top tier (~21,000) their
 * resolution is ~0.002, so relevance differences smaller than that count as ties (and
 * popularity decides), which only matters for near-identical titles.
 */
import { MAX_WHOLE_QUERY_CHARS, lookupWords, maxTypos, titleKey, titleTypos, tokenize } from '../search/normalize.ts';
import type { SearchQuery } from '../../contracts/ports.ts';
import { LANGUAGE_ANALYZERS } from './mapping.ts';

export const EXACT_BONUS = 10_000;
export const ALL_WORDS_BONUS = 10_000;
export const AVAILABLE_BONUS = 1_000;
/** Above a near-exact title (ALL_WORDS + NEAR_EXACT + AVAILABLE + relevance < 16,200), below an exact one (>= 20,000). */
export const BEGINS_BONUS = 18_000;
export const NEAR_EXACT_BONUS = 5_000;
/**
 * Every looked-up word a whole word of one title field (MATCH_EVERY_WORD): with ALL_WORDS_BONUS
 * 16,500-17,700 with availability and relevance, above a near-exact title (< 16,200), below a
 * title the query begins (>= 18,000); never added to NEAR_EXACT_BONUS (that clause excludes it).
 */
export const EVERY_WORD_BONUS = 6_500;
/** Lookup words beyond this are ignored (titles are short; this bounds relevance and the query's clauses). */
export const MAX_WORDS = 8;
/**
 * Index terms one typo'd or prefix word may expand to (OpenSearch's default, stated so the
 * bound is visible): with MAX_WORDS and maxTypos (no typos above MAX_TYPO_WORD_CHARS) it bounds
 * the terms a query visits whatever its text.
 */
export const MAX_EXPANSIONS = 50;

export interface QueryOptions {
  baseLang: string;
  /** Languages with their own title fields (see mapping.ts). */
  locales: ReadonlySet<string>;
  /** `w` in the popularity factor 1 + w * log10(1 + popularity). */
  popularityWeight: number;
  /** Extra weight of the query language's own title over the base titles. */
  localeBoost: number;
  /** The index's max_result_window: from + size may not exceed it. */
  maxResultWindow: number;
  /** Whether the index has `.stem` sub-fields (mapping.ts, analysis-common present). */
  languageAnalyzers: boolean;
}

/** A text field searched and its weight. */
interface Field {
  name: string;
  boost: number;
}

type Json = Record<string, unknown>;

/** The search body, or null when the query has no word (the answer is then empty). */
export function searchBody(query: SearchQuery, options: QueryOptions): Json | null {
  const words = tokenize(query.q);
  if (words.length === 0) return null;
  const lookup = distinct(lookupWords(words)).slice(0, MAX_WORDS);
  const last = words[words.length - 1] as string;
  const lang = query.lang;
  const local = lang !== options.baseLang && options.locales.has(lang);

  // Base titles weigh a little more than alternatives, as in the in-process adapter.
  const fields: Field[] = [
    { name: 'title', boost: 1.5 },
    { name: 'alt', boost: 1 },
  ];
  if (local) fields.push({ name: `loc.${lang}`, boost: 1.5 * options.localeBoost });

  const stemFields: string[] = [];
  if (options.languageAnalyzers) {
    if (LANGUAGE_ANALYZERS[options.baseLang] !== undefined) stemFields.push('title.stem');
    if (local && LANGUAGE_ANALYZERS[lang] !== undefined) stemFields.push(`loc.${lang}.stem`);
  }

  const wordQueries = lookup.map((w) => wordQuery(w, w === last, fields));
  const phrase = words.join(' ');

  const relevance: Json = {
    bool: {
      must: [{ bool: { should: wordQueries, minimum_should_match: 1 } }],
      // The query as a contiguous run of a title's words (the in-process phrase factor), and
      // the language analyzers' stems where the cluster has them: relevance only.
      should: [
        ...fields.map((f) => ({ match_phrase: { [f.name]: { query: phrase, boost: f.boost } } })),
        ...stemFields.map((f) => ({ match: { [f]: { query: phrase, boost: 0.3 } } })),
      ],
    },
  };

  const scored: Json = {
    function_score: {
      query: relevance,
      functions: [
        { weight: 1 },
        { field_value_factor: { field: 'popularity', modifier: 'log1p', missing: 0 }, weight: options.popularityWeight },
      ],
      score_mode: 'sum',
      boost_mode: 'multiply',
    },
  };

  const key = titleKey(words);
  const country = query.country.toUpperCase();
  const keyFields = local ? ['keys', `lkey.${lang}`] : ['keys'];
  const anyKey = (clause: (field: string) => Json): Json => ({ bool: { should: keyFields.map(clause), minimum_should_match: 1 } });
  const typos = titleTypos(key);

  const filter: Json[] = [];
  if (query.kind !== undefined) filter.push({ term: { kind: query.kind } });
  if (query.genre !== undefined) filter.push({ term: { genres: query.genre } });
  if (query.provider !== undefined) filter.push({ term: { avail: `${country}:${query.provider}` } });

  const offset = Math.max(0, Math.floor(query.offset));
  const window = Math.max(0, options.maxResultWindow - offset);
  const size = Math.min(Math.max(0, Math.floor(query.limit)), window);

  // One field holds every looked-up word whole (no fuzziness, no prefix): MATCH_EVERY_WORD.
  const everyWord: Json = {
    bool: {
      should: fields.map((f) => ({ bool: { filter: lookup.map((w) => ({ match: { [f.name]: { query: w, operator: 'and' } } })) } })),
      minimum_should_match: 1,
    },
  };
  const matched: Json = {
    bool: {
      must: [scored],
      should: [
        { constant_score: { filter: everyWord, boost: EVERY_WORD_BONUS } },
        { constant_score: { filter: anyKey((f) => ({ term: { [f]: key } })), boost: EXACT_BONUS } },
        { constant_score: { filter: { bool: { filter: wordQueries } }, boost: ALL_WORDS_BONUS } },
        { constant_score: { filter: { term: { avail: country } }, boost: AVAILABLE_BONUS } },
        // The whole query within typos of a whole title, every word matched (MATCH_NEAR_EXACT).
        ...(typos === 0 ? [] : [{
          constant_score: {
            filter: {
              bool: {
                filter: [anyKey((f) => ({ fuzzy: { [f]: { value: key, fuzziness: typos, transpositions: true, max_expansions: MAX_EXPANSIONS } } })), ...wordQueries],
                must_not: [everyWord],
              },
            },
            boost: NEAR_EXACT_BONUS,
          },
        }]),
      ],
    },
  };
  // A title the query begins (MATCH_BEGINS): BEGINS_BONUS + log10(1 + popularity), whatever its
  // relevance and availability, so popularity orders these titles. dis_max keeps the better of
  // the two scores: a whole-title match still ranks above. Only when the last word was looked
  // up as a prefix, which also makes every such title one of the matches above.
  const begins: Json | null = [...last].length < 2 || [...key].length > MAX_WHOLE_QUERY_CHARS ? null : {
    function_score: {
      query: { constant_score: { filter: anyKey((f) => ({ prefix: { [f]: key } })), boost: BEGINS_BONUS } },
      functions: [{ field_value_factor: { field: 'popularity', modifier: 'log1p', missing: 0 } }],
      boost_mode: 'sum',
    },
  };

  return {
    query: {
      bool: {
        must: [begins === null ? matched : { dis_max: { queries: [matched, begins], tie_breaker: 0 } }],
        filter,
      },
    },
    sort: [{ _score: 'desc' }, { popularity: 'desc' }, { id: 'asc' }],
    track_total_hits: true,
    _source: false,
    // Past the window only the total can be answered (offset beyond every result anyway
    // for all but the largest result sets); from is clamped so the request stays valid.
    from: size === 0 ? 0 : offset,
    size,
  };
}

/**
 * One query word on every field: the best of its exact, typo-tolerant and (last word only, from
 * 2 characters) prefix matches. `operator: 'and'` because a word the standard tokenizer splits
 * (a run of CJK ideographs) must match all its pieces, as the in-process adapter matches the
 * whole word.
 */
function wordQuery(word: string, isLast: boolean, fields: Field[]): Json {
  const typos = maxTypos(word);
  const queries: Json[] = [];
  for (const f of fields) {
    queries.push({ match: { [f.name]: { query: word, operator: 'and', boost: f.boost } } });
    if (typos > 0) {
      // Weighted below an exact match: a typo'd word is still a typo.
      queries.push({
        match: {
          [f.name]: {
            query: word, operator: 'and', fuzziness: 'AUTO:4,9', fuzzy_transpositions: true, max_expansions: MAX_EXPANSIONS, boost: 0.5 * f.boost,
          },
        },
      });
    }
    if (isLast && [...word].length >= 2) {
      queries.push({ match_bool_prefix: { [f.name]: { query: word, operator: 'and', max_expansions: MAX_EXPANSIONS, boost: 0.5 * f.boost } } });
    }
  }
  return { dis_max: { queries } };
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}
