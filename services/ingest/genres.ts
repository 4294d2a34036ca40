/**
 * `genres`: the genre vocabulary. Genres are never removed (titles keep referring to their ids),
 * so an observation defines new ids and renames known ones.
 */
import type { Genre } from '../../contracts/domain.ts';
import type { DomainEvent, GenresEvent } from '../../contracts/events.ts';
import { streams } from '../../contracts/ids.ts';
import type { GenresObserved } from '../../contracts/observations.ts';
import {
  alreadySeen,
  emptySeen,
  metadataOf,
  noteEvent,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';

export interface GenresState {
  seen: Seen;
  /** By genre id. */
  genres: Record<string, Genre>;
}

const STREAM = 'stream';

function initialState(): GenresState {
  return { seen: emptySeen(), genres: {} };
}

function evolve(state: GenresState, event: DomainEvent): GenresState {
  const e = event as GenresEvent;
  switch (e.type) {
    case 'GenreDefined':
    case 'GenreChanged':
      return {
        seen: noteEvent(state.seen, STREAM, e.metadata),
        genres: { ...state.genres, [String(e.data.genre.id)]: e.data.genre },
      };
    default:
      return state;
  }
}

function decide(state: GenresState, o: GenresObserved): Decision {
  const seen = alreadySeen(state.seen, o, [STREAM]);
  if (seen !== null) return seen;

  const metadata = metadataOf(o);
  const events: DomainEvent[] = [];
  for (const g of [...o.data.genres].sort((a, b) => a.id - b.id)) {
    const genre: Genre = { id: g.id, slug: g.slug, name: g.name };
    const before = state.genres[String(g.id)];
    if (before === undefined) events.push({ type: 'GenreDefined', data: { genre }, metadata });
    else if (before.slug !== genre.slug || before.name !== genre.name) events.push({ type: 'GenreChanged', data: { genre }, metadata });
  }
  if (events.length === 0) return skip('unchanged genres');
  return { kind: 'append', stream: streams.genres(), events };
}

export const genresDecider: Decider<GenresState, GenresObserved> = {
  kind: 'genres',
  observationTypes: ['GenresObserved'],
  initialState,
  evolve,
  decide,
};
