/** /v1/search: the search index ranks ids; the read models turn them into list items. */
import { performance } from 'node:perf_hooks';
import { asUnavailable } from '../../../contracts/errors.ts';
import type { SearchQuery } from '../../../contracts/ports.ts';
import { defaultLanguageOf } from '../languages.ts';
import { int, reqStr, str } from '../params.ts';
import { roundMs } from '../responseCache.ts';
import type { HandlerInput } from '../types.ts';
import { listItems } from './common.ts';

/**
 * The index stores provider ids (projections/search.ts); the API takes a provider `short_id`.
 * Returns the provider id, or null when no provider of the country has that short id (then
 * nothing can match). A provider id given instead of a short id is accepted as well.
 */
async function providerIdOf(input: HandlerInput, country: string, shortId: string): Promise<string | null> {
  const doc = await input.catalog.get('providers', country);
  const providers = doc?.providers ?? [];
  const wanted = shortId.toLowerCase();
  const hit =
    providers.find((p) => p.shortId !== null && p.shortId.toLowerCase() === wanted) ??
    providers.find((p) => p.id.toLowerCase() === wanted);
  return hit?.id ?? null;
}

export async function search(input: HandlerInput): Promise<unknown> {
  const started = performance.now();
  const { params, deps } = input;
  const q = reqStr(params, 'q');
  const country = reqStr(params, 'country');
  const lang = str(params, 'lang') ?? defaultLanguageOf(country);
  const limit = int(params, 'limit');
  const offset = int(params, 'offset');
  const kind = str(params, 'kind') as SearchQuery['kind'];
  const genre = str(params, 'genre');
  const providerParam = str(params, 'provider');

  const envelope = (total: number, results: unknown[]) => ({
    total, limit, offset, query: q, country, lang, results,
    processing_time_ms: roundMs(performance.now() - started),
  });

  let provider: string | undefined;
  if (providerParam !== undefined) {
    const id = await providerIdOf(input, country, providerParam);
    if (id === null) return envelope(0, []);
    provider = id;
  }

  const query: SearchQuery = { q, country, lang, limit, offset };
  if (kind !== undefined) query.kind = kind;
  if (genre !== undefined) query.genre = genre;
  if (provider !== undefined) query.provider = provider;
  let found;
  try {
    found = await deps.search.search(query);
  } catch (err) {
    throw asUnavailable(err, 'Search');
  }
  const ids = limit === 0 ? [] : found.ids.slice(0, limit);
  const items = await listItems(input, ids);
  const results = ids.flatMap((id) => {
    const item = items.get(id);
    return item ? [item] : [];
  });
  return envelope(found.total, results);
}

