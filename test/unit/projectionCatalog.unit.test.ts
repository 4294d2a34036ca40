import assert from 'node:assert/strict';
import type { CollectionBody } from '../../contracts/domain.ts';
import type { FeaturedDoc, ProvidersDoc } from '../../contracts/readModels.ts';
import { collectionsProjection } from '../../projections/curatedCollections.ts';
import { featuredProjection } from '../../projections/featured.ts';
import { foldStream } from '../../projections/fold.ts';
import { genresProjection } from '../../projections/genres.ts';
import { providersProjection } from '../../projections/providers.ts';
import { observedAt, provider, recorded } from './projectionEvents.ts';

describe('providers projection', () => {
  it('keeps providers by weight descending, ties by id', () => {
    const doc = foldStream(providersProjection, [
      recorded('ProviderAdded', { country: 'DE', provider: provider('zdf', 5) }),
      recorded('ProviderAdded', { country: 'DE', provider: provider('netflix', 90) }),
      recorded('ProviderAdded', { country: 'DE', provider: provider('ard', 5) }),
    ]);
    assert.equal(providersProjection.documentId(recorded('ProviderRemoved', { country: 'DE', providerId: 'x' })), 'DE');
    assert.deepEqual(doc, { country: 'DE', providers: [provider('netflix', 90), provider('ard', 5), provider('zdf', 5)] });
  });

  it('replaces a changed provider and re-sorts by its new weight', () => {
    const stored: ProvidersDoc = { country: 'DE', providers: [provider('netflix', 90), provider('ard', 5)] };
    const changed = providersProjection.evolve(stored, recorded('ProviderChanged', { country: 'DE', provider: provider('ard', 95, { name: 'ARD' }), changedFields: ['weight', 'name'] }));
    assert.deepEqual(changed, { country: 'DE', providers: [provider('ard', 95, { name: 'ARD' }), provider('netflix', 90)] });
  });

  it('removes a provider and deletes the document when none is left', () => {
    const stored: ProvidersDoc = { country: 'DE', providers: [provider('netflix', 90), provider('ard', 5)] };
    const one = providersProjection.evolve(stored, recorded('ProviderRemoved', { country: 'DE', providerId: 'netflix' }));
    assert.deepEqual(one, { country: 'DE', providers: [provider('ard', 5)] });
    assert.equal(providersProjection.evolve(one, recorded('ProviderRemoved', { country: 'DE', providerId: 'ard' })), null);
    assert.equal(providersProjection.evolve(null, recorded('ProviderRemoved', { country: 'DE', providerId: 'ard' })), null);
  });
});

describe('genres projection', () => {
  it('keeps one document `all` with genres by id, a change replacing its genre', () => {
    const defined = recorded('GenreDefined', { genre: { id: 18, slug: 'drama', name: 'Drama' } });
    assert.equal(genresProjection.documentId(defined), 'all');
    const doc = foldStream(genresProjection, [
      defined,
      recorded('GenreDefined', { genre: { id: 12, slug: 'adventure', name: 'Adventure' } }),
      recorded('GenreChanged', { genre: { id: 18, slug: 'drama', name: 'Drama & Co' } }),
    ]);
    assert.deepEqual(doc, { genres: [{ id: 12, slug: 'adventure', name: 'Adventure' }, { id: 18, slug: 'drama', name: 'Drama & Co' }] });
  });
});

describe('collections projection', () => {
  const body: CollectionBody = {
    name: 'Best of 2025',
    description: null,
    country: 'US',
    language: 'en',
    items: [{ mediaId: 'mv00000002', position: null }, { mediaId: 'mv00000001', position: 1 }],
  };

  it('creates the document with a slug-derived id and keeps the curator item order', () => {
    const event = recorded('CollectionPublished', { slug: 'best-of-2025', collection: body });
    assert.equal(collectionsProjection.documentId(event), 'best-of-2025');
    assert.deepEqual(collectionsProjection.evolve(null, event), {
      id: 'col_best-of-2025', slug: 'best-of-2025', name: 'Best of 2025', description: null, country: 'US', language: 'en', items: body.items,
    });
  });

  it('replaces the body on CollectionChanged and deletes on CollectionWithdrawn', () => {
    const published = collectionsProjection.evolve(null, recorded('CollectionPublished', { slug: 'best-of-2025', collection: body }));
    const changed = collectionsProjection.evolve(published, recorded('CollectionChanged', { slug: 'best-of-2025', collection: { ...body, name: 'Best of the year', country: null }, changedFields: ['name', 'country'] }));
    assert.equal(changed?.name, 'Best of the year');
    assert.equal(changed?.country, null);
    assert.equal(changed?.id, 'col_best-of-2025');
    assert.equal(collectionsProjection.evolve(changed, recorded('CollectionWithdrawn', { slug: 'best-of-2025' })), null);
  });
});

describe('featured projection', () => {
  it('replaces one period at a time, items by position, updatedAt from the observation', () => {
    const daily = recorded('FeaturedSelectionChanged', { country: 'US', period: 'daily', items: [{ mediaId: 'b', position: 2 }, { mediaId: 'a', position: 1 }] }, observedAt('2026-03-01T08:00:00Z'));
    assert.equal(featuredProjection.documentId(daily), 'US');
    const first = featuredProjection.evolve(null, daily);
    assert.deepEqual(first, { country: 'US', updatedAt: '2026-03-01T08:00:00Z', daily: [{ mediaId: 'a', position: 1 }, { mediaId: 'b', position: 2 }], weekly: [] });
    const weekly = recorded('FeaturedSelectionChanged', { country: 'US', period: 'weekly', items: [{ mediaId: 'c', position: 1 }] }, observedAt('2026-03-02T08:00:00Z'));
    const expected: FeaturedDoc = { country: 'US', updatedAt: '2026-03-02T08:00:00Z', daily: [{ mediaId: 'a', position: 1 }, { mediaId: 'b', position: 2 }], weekly: [{ mediaId: 'c', position: 1 }] };
    assert.deepEqual(featuredProjection.evolve(first, weekly), expected);
  });
});
