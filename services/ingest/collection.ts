/**
 * `collection-{slug}`: an editorial collection. Published the first time (or again after a
 * withdrawal), changed when its body differs, withdrawn when the crawler says so.
 */
import type { CollectionBody } from '../../contracts/domain.ts';
import type { CollectionEvent, DomainEvent } from '../../contracts/events.ts';
import { mediaIdOf, streams } from '../../contracts/ids.ts';
import type { CollectionObserved, CollectionObservedData } from '../../contracts/observations.ts';
import {
  alreadySeen,
  changedFieldsOf,
  emptySeen,
  metadataOf,
  noteEvent,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';

export interface CollectionState {
  seen: Seen;
  /** `none`: never published. */
  status: 'none' | 'published' | 'withdrawn';
  /** The last published body (kept after a withdrawal, for the record). */
  body: CollectionBody | null;
}

export const COLLECTION_FIELDS = ['name', 'description', 'country', 'language', 'items'] as const satisfies readonly (keyof CollectionBody)[];

const STREAM = 'stream';

/** The body as events carry it: media ids instead of crawler refs, upper-case country. */
export function collectionBodyOf(d: CollectionObservedData): CollectionBody {
  return {
    name: d.name,
    description: d.description,
    country: d.country === null ? null : d.country.toUpperCase(),
    language: d.language,
    items: d.items.map((item) => ({ mediaId: mediaIdOf(item.contentType, item.sourceId), position: item.position })),
  };
}

function initialState(): CollectionState {
  return { seen: emptySeen(), status: 'none', body: null };
}

function evolve(state: CollectionState, event: DomainEvent): CollectionState {
  const e = event as CollectionEvent;
  switch (e.type) {
    case 'CollectionPublished':
    case 'CollectionChanged':
      return { seen: noteEvent(state.seen, STREAM, e.metadata), status: 'published', body: e.data.collection };
    case 'CollectionWithdrawn':
      return { ...state, seen: noteEvent(state.seen, STREAM, e.metadata), status: 'withdrawn' };
    default:
      return state;
  }
}

function decide(state: CollectionState, o: CollectionObserved): Decision {
  const seen = alreadySeen(state.seen, o, [STREAM]);
  if (seen !== null) return seen;

  const { slug } = o.data;
  const stream = streams.collection(slug);
  const metadata = metadataOf(o);
  if (o.data.status === 'withdrawn') {
    if (state.status !== 'published') return skip(`collection ${slug} is not published`);
    return { kind: 'append', stream, events: [{ type: 'CollectionWithdrawn', data: { slug }, metadata }] };
  }
  const collection = collectionBodyOf(o.data);
  if (state.status !== 'published' || state.body === null) {
    return { kind: 'append', stream, events: [{ type: 'CollectionPublished', data: { slug, collection }, metadata }] };
  }
  const changedFields = changedFieldsOf(state.body, collection, COLLECTION_FIELDS);
  if (changedFields.length === 0) return skip('unchanged collection');
  return { kind: 'append', stream, events: [{ type: 'CollectionChanged', data: { slug, collection, changedFields }, metadata }] };
}

export const collectionDecider: Decider<CollectionState, CollectionObserved> = {
  kind: 'collection',
  observationTypes: ['CollectionObserved'],
  initialState,
  evolve,
  decide,
};
