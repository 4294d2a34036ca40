/**
 * What the OpenSearch search index stores: its settings and mapping, and the indexed form of a
 * SearchDocument. Pure functions, so they are unit-testable without a server.
 *
 * One index holds every title once; each language has its own fields (`loc.<lang>`) rather than
 * each language its own index (see searchIndex.ts for why). Matching never relies on the
 * server's analysis: the text is normalised here with infra/search/normalize.ts (case, accents,
 * apostrophes) and indexed with the `standard` analyzer, which every OpenSearch has, so the
 * bare integ-test server of CI and a full distribution match exactly the same titles. Where the
 * cluster has the analysis-common module, each title field also gets a `.stem` sub-field with
 * its language's analyzer, which only adds relevance (a query never matches through it alone).
 */
import { indexTerms, titleKey, titleKeysOf, tokenize } from '../search/normalize.ts';
import type { SearchDocument } from '../../contracts/ports.ts';

/** Bumped when the mapping changes; an index with another version is reported at start-up. */
export const MAPPING_VERSION = 1;

/**
 * The built-in language analyzers of OpenSearch (analysis-common) for the catalog languages.
 * Languages missing here (he, hr, ka, pl, sk, ...) have none built in and use `standard` only.
 */
export const LANGUAGE_ANALYZERS: Readonly<Record<string, string>> = {
  ar: 'arabic', bg: 'bulgarian', bn: 'bengali', ca: 'catalan', cs: 'czech', da: 'danish',
  de: 'german', el: 'greek', en: 'english', es: 'spanish', et: 'estonian', fa: 'persian',
  fi: 'finnish', fr: 'french', hi: 'hindi', hu: 'hungarian', id: 'indonesian', it: 'italian',
  ja: 'cjk', ko: 'cjk', zh: 'cjk', lt: 'lithuanian', lv: 'latvian', nb: 'norwegian',
  no: 'norwegian', nl: 'dutch', pt: 'portuguese', ro: 'romanian', ru: 'russian', sv: 'swedish',
  th: 'thai', tr: 'turkish',
};

/** A language code usable as a field name (no dots, which would nest objects). */
const LANG_RE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})?$/i;

export function isFieldSafeLang(lang: string): boolean {
  return LANG_RE.test(lang);
}

export interface MappingOptions {
  /** Language whose title (`titles[baseLang] ?? title`) is every title's main title. */
  baseLang: string;
  /** Languages that get their own title fields; translations into others are not indexed. */
  locales: readonly string[];
  /** Whether the cluster has the language analyzers (analysis-common). */
  languageAnalyzers: boolean;
}

/** A normalised title field, plus its `.stem` sub-field when the language has an analyzer. */
function textField(lang: string, languageAnalyzers: boolean): Record<string, unknown> {
  const analyzer = languageAnalyzers ? LANGUAGE_ANALYZERS[lang] : undefined;
  return {
    type: 'text',
    analyzer: 'standard',
    ...(analyzer === undefined ? {} : { fields: { stem: { type: 'text', analyzer } } }),
  };
}

/** The body of the create-index request. */
export function indexBody(options: MappingOptions): Record<string, unknown> {
  const loc: Record<string, unknown> = {};
  const lkey: Record<string, unknown> = {};
  for (const lang of options.locales) {
    if (lang === options.baseLang || !isFieldSafeLang(lang)) continue;
    loc[lang] = textField(lang, options.languageAnalyzers);
    lkey[lang] = { type: 'keyword', ignore_above: 512 };
  }
  return {
    settings: {
      // One shard: BM25 statistics are then exact (equal titles score equally), and a catalog of
      // a few hundred thousand short titles is far below the size where sharding pays.
      number_of_shards: 1,
      // Right for the single node of development and CI; on a multi-node cluster raise it with
      // the index settings API (it can change on a live index, unlike the shard count).
      number_of_replicas: 0,
      // The default, set explicitly: query.ts clamps from + size to it.
      max_result_window: 10_000,
    },
    mappings: {
      // Documents are built by toIndexed only; a stray field is a bug, not a new column.
      dynamic: 'strict',
      _meta: { marquee: { mappingVersion: MAPPING_VERSION, languageAnalyzers: options.languageAnalyzers } },
      properties: {
        id: { type: 'keyword' },
        kind: { type: 'keyword' },
        genres: { type: 'keyword' },
        popularity: { type: 'float' },
        // "US" for a title with at least one provider in the US, "US:nfx" per provider.
        avail: { type: 'keyword' },
        title: textField(options.baseLang, options.languageAnalyzers),
        // The other base titles (`title`, `originalTitle`), one array element each.
        alt: textField('', false),
        // The base titles' keys (normalize.ts titleKeysOf: also each joinedKey), for the whole-title match.
        keys: { type: 'keyword', ignore_above: 512 },
        loc: { properties: loc },
        lkey: { properties: lkey },
      },
    },
  };
}

/** The document as indexed: `_id` is `id`. */
export interface IndexedDocument {
  id: string;
  kind: SearchDocument['kind'];
  genres: string[];
  popularity: number;
  avail: string[];
  title: string;
  alt: string[];
  keys: string[];
  loc: Record<string, string>;
  lkey: Record<string, string>;
}

/** A title as indexed: its words and its joined runs ("spider man spiderman", normalize.ts indexTerms). */
const normalised = (text: string): string => indexTerms(text).join(' ');

/**
 * The indexed form of a document for the mapping of `options`: the same titles as the
 * in-process adapter (main title `titles[baseLang] ?? title`, alternatives `title` and
 * `originalTitle`, and a translation per language unless it equals a base title).
 */
export function toIndexed(doc: SearchDocument, options: Pick<MappingOptions, 'baseLang' | 'locales'>): IndexedDocument {
  const primary = doc.titles[options.baseLang] ?? doc.title;
  const alternatives = distinct([doc.title, doc.originalTitle ?? ''].filter((t) => t.trim() !== '' && t !== primary));
  const keys = titleKeysOf([primary, ...alternatives]);

  const loc: Record<string, string> = {};
  const lkey: Record<string, string> = {};
  const allowed = new Set(options.locales);
  for (const [lang, text] of Object.entries(doc.titles)) {
    if (lang === options.baseLang || !allowed.has(lang) || !isFieldSafeLang(lang)) continue;
    const key = titleKey(tokenize(text));
    // A translation equal to a base title adds nothing the base fields do not find.
    if (key === '' || keys.includes(key)) continue;
    loc[lang] = normalised(text);
    lkey[lang] = key;
  }

  const avail: string[] = [];
  for (const [country, providers] of Object.entries(doc.availability)) {
    if (providers.length === 0) continue;
    const cc = country.toUpperCase();
    avail.push(cc, ...providers.map((p) => `${cc}:${p}`));
  }

  return {
    id: doc.id,
    kind: doc.kind,
    genres: doc.genres,
    // field_value_factor's log1p fails on values below -1; popularity is never meaningfully negative.
    popularity: Number.isFinite(doc.popularity) && doc.popularity > 0 ? doc.popularity : 0,
    avail,
    title: normalised(primary),
    alt: alternatives.map(normalised),
    keys,
    loc,
    lkey,
  };
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}
