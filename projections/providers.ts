/**
 * `providers` read model, key: country. Providers heaviest first (the order every client shows
 * them in), ties by id so the order is total.
 */
import type { Provider } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { ProvidersDoc } from '../contracts/readModels.ts';
import { compareStrings } from './offerOrder.ts';

export function compareProviders(a: Provider, b: Provider): number {
  return b.weight - a.weight || compareStrings(a.id, b.id);
}

export const providersProjection = defineProjection<ProvidersDoc>({
  name: 'providers',
  version: 1,
  canHandle: ['ProviderAdded', 'ProviderChanged', 'ProviderRemoved'],
  documentId(event: RecordedEvent): string | null {
    switch (event.type) {
      case 'ProviderAdded':
      case 'ProviderChanged':
      case 'ProviderRemoved':
        return event.data.country;
      default:
        return null;
    }
  },
  evolve(doc: ProvidersDoc | null, event: RecordedEvent): ProvidersDoc | null {
    switch (event.type) {
      case 'ProviderAdded':
      case 'ProviderChanged': {
        const { country, provider } = event.data;
        const others = (doc?.providers ?? []).filter((p) => p.id !== provider.id);
        return { country, providers: [...others, provider].sort(compareProviders) };
      }
      case 'ProviderRemoved': {
        if (doc === null) return null;
        const providers = doc.providers.filter((p) => p.id !== event.data.providerId);
        // A country without providers is not covered: drop it, so the country list that the
        // ranking job and the snapshot derive from this model stays exact.
        return providers.length === 0 ? null : { ...doc, providers };
      }
      default:
        return doc;
    }
  },
});
