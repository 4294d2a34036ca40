/**
 * `providers-{country}`: the streaming providers of a country. Each observation is the full
 * list, so providers missing from it are removed.
 */
import type { Provider } from '../../contracts/domain.ts';
import type { DomainEvent, ProvidersEvent } from '../../contracts/events.ts';
import { streams } from '../../contracts/ids.ts';
import type { ProvidersObserved } from '../../contracts/observations.ts';
import {
  alreadySeen,
  byString,
  changedFieldsOf,
  emptySeen,
  metadataOf,
  noteEvent,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';
import { normalizeCountry } from './route.ts';

export interface ProvidersState {
  seen: Seen;
  /** By provider id. */
  providers: Record<string, Provider>;
}

/** Provider fields compared for ProviderChanged (the id is the identity). */
export const PROVIDER_FIELDS = ['parentId', 'name', 'logo', 'shortId', 'weight'] as const satisfies readonly (keyof Provider)[];

const STREAM = 'stream';

function providerOf(p: Provider): Provider {
  return { id: p.id, parentId: p.parentId, name: p.name, logo: p.logo, shortId: p.shortId, weight: p.weight };
}

function initialState(): ProvidersState {
  return { seen: emptySeen(), providers: {} };
}

function evolve(state: ProvidersState, event: DomainEvent): ProvidersState {
  const e = event as ProvidersEvent;
  switch (e.type) {
    case 'ProviderAdded':
    case 'ProviderChanged':
      return {
        seen: noteEvent(state.seen, STREAM, e.metadata),
        providers: { ...state.providers, [e.data.provider.id]: e.data.provider },
      };
    case 'ProviderRemoved': {
      const providers = { ...state.providers };
      delete providers[e.data.providerId];
      return { seen: noteEvent(state.seen, STREAM, e.metadata), providers };
    }
    default:
      return state;
  }
}

function decide(state: ProvidersState, o: ProvidersObserved): Decision {
  const seen = alreadySeen(state.seen, o, [STREAM]);
  if (seen !== null) return seen;

  const country = normalizeCountry(o.data.country);
  const metadata = metadataOf(o);
  const observed = new Map(o.data.providers.map((p) => [p.id, providerOf(p)] as const));
  const removed: DomainEvent[] = Object.keys(state.providers)
    .filter((id) => !observed.has(id))
    .sort(byString)
    .map((providerId) => ({ type: 'ProviderRemoved', data: { country, providerId }, metadata }));
  const changed: DomainEvent[] = [];
  const added: DomainEvent[] = [];
  for (const id of [...observed.keys()].sort(byString)) {
    const provider = observed.get(id) as Provider;
    const before = state.providers[id];
    if (before === undefined) {
      added.push({ type: 'ProviderAdded', data: { country, provider }, metadata });
      continue;
    }
    const changedFields = changedFieldsOf(before, provider, PROVIDER_FIELDS);
    if (changedFields.length > 0) changed.push({ type: 'ProviderChanged', data: { country, provider, changedFields }, metadata });
  }
  const events = [...removed, ...changed, ...added];
  if (events.length === 0) return skip('unchanged providers');
  return { kind: 'append', stream: streams.providers(country), events };
}

export const providersDecider: Decider<ProvidersState, ProvidersObserved> = {
  kind: 'providers',
  observationTypes: ['ProvidersObserved'],
  initialState,
  evolve,
  decide,
};
