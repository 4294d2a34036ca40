/** /v1/collections, /v1/collections/{slug}, /v1/providers and /v1/locales. */
import { LOCALES } from '../../../contracts/domain.ts';
import type { CollectionDoc } from '../../../contracts/readModels.ts';
import { compareProviders } from '../../../projections/providers.ts';
import { bool, int, reqStr, str } from '../params.ts';
import { collectionSummary, providerItem } from '../present.ts';
import type { HandlerInput } from '../types.ts';
import { listItems, notFound, page } from './common.ts';

/** A collection without a country is shown everywhere; one with a country only there. */
function visibleIn(doc: CollectionDoc, country: string): boolean {
  return doc.country === null || doc.country.toUpperCase() === country;
}

export async function listCollections({ params, catalog }: HandlerInput): Promise<unknown> {
  const country = reqStr(params, 'country');
  // A few dozen collections in all: one scan, filtered here.
  const rows = await catalog.scan('collections');
  const collections = rows.map((r) => r.doc).filter((doc) => visibleIn(doc, country)).map(collectionSummary);
  return { country, collections };
}

export async function getCollection(input: HandlerInput): Promise<unknown> {
  const { params, catalog } = input;
  const slug = reqStr(params, 'slug');
  const country = reqStr(params, 'country');
  const limit = int(params, 'limit');
  const offset = int(params, 'offset');
  const doc = await catalog.get('collections', slug);
  if (!doc || !visibleIn(doc, country)) throw notFound(`No collection '${slug}' in ${country}.`);
  const slice = page(doc.items, limit, offset);
  const items = await listItems(input, slice.map((i) => i.mediaId));
  const results = [];
  for (const ref of slice) {
    const item = items.get(ref.mediaId);
    if (item) results.push({ ...item, position: ref.position });
  }
  return { ...collectionSummary(doc), total: doc.items.length, limit, offset, results };
}

export async function listProviders({ params, catalog }: HandlerInput): Promise<unknown> {
  const country = reqStr(params, 'country');
  const q = str(params, 'q')?.toLowerCase();
  const hideChildren = bool(params, 'hide_children');
  const parent = str(params, 'parent');
  const doc = await catalog.get('providers', country);
  const providers = [...(doc?.providers ?? [])]
    .filter((p) => q === undefined || p.name.toLowerCase().includes(q) || p.id.toLowerCase().includes(q))
    .filter((p) => !hideChildren || p.parentId === null)
    .filter((p) => parent === undefined || p.parentId === parent)
    .sort(compareProviders)
    .map(providerItem);
  return { country, providers };
}

export async function listLocales(): Promise<unknown> {
  return { locales: [...LOCALES] };
}
