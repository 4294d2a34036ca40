import assert from 'node:assert/strict';
import { READ_MODELS } from '../../contracts/readModels.ts';
import type { OfferKey } from '../../contracts/domain.ts';
import { ALL_PROJECTIONS, projectionByName } from '../../projections/index.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { foldStream } from '../../projections/fold.ts';
import { searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/search.ts';
import { details, offer, recorded } from './projectionEvents.ts';

const mediaId = 'mv00000007';
const registered = recorded('MediaRegistered', {
  mediaId, kind: 'movie', sourceId: 7, slug: 'heat',
  details: details({ title: 'Heat', originalTitle: 'Heat!', year: 1995, genreIds: [80, 18], popularity: 42 }),
});

function keyOf(providerId: string, webUrl: string): OfferKey {
  return { providerId, addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl };
}

const genres = [{ id: 18, slug: 'drama', name: 'Drama' }, { id: 80, slug: 'crime', name: 'Crime' }];

describe('search projection', () => {
  it('routes media and offer events to the media id', () => {
    assert.equal(searchProjection.documentId(registered), mediaId);
    assert.equal(searchProjection.documentId(recorded('OfferRemoved', { mediaId, country: 'US', offer: keyOf('netflix', 'u') })), mediaId);
    assert.equal(searchProjection.documentId(recorded('SeasonChanged', { mediaId, season: { seasonNumber: 1, title: 't', overview: null, poster: null, airDate: null, episodes: [] } })), null);
  });

  it('builds the title fields from the registration, genre ids sorted', () => {
    const expected: SearchProjectionDoc = {
      id: mediaId, kind: 'movie', title: 'Heat', originalTitle: 'Heat!', titles: {}, year: 1995, genreIds: [18, 80], popularity: 42,
      availability: {}, offerCounts: {}, registered: true,
    };
    assert.deepEqual(searchProjection.evolve(null, registered), expected);
  });

  it('keeps translated titles per language and drops a language whose title became null', () => {
    const t = (title: string | null) => ({ title, overview: null, tagline: null, poster: null, backdrop: null });
    const doc = foldStream(searchProjection, [
      registered,
      recorded('MediaTranslationChanged', { mediaId, language: 'fr', translation: t('Chaleur') }),
      recorded('MediaTranslationChanged', { mediaId, language: 'de', translation: t('Hitze') }),
    ]);
    assert.deepEqual(doc?.titles, { de: 'Hitze', fr: 'Chaleur' });
    const dropped = searchProjection.evolve(doc, recorded('MediaTranslationChanged', { mediaId, language: 'fr', translation: t(null) }));
    assert.deepEqual(dropped?.titles, { de: 'Hitze' });
  });

  it('updates title fields on MediaDetailsChanged and ignores it without a document', () => {
    const changed = recorded('MediaDetailsChanged', { mediaId, details: details({ title: 'Heat (1995)', popularity: null, genreIds: [] }), changedFields: ['title'] });
    const doc = searchProjection.evolve(searchProjection.evolve(null, registered), changed);
    assert.equal(doc?.title, 'Heat (1995)');
    assert.equal(doc?.popularity, 0);
    assert.deepEqual(doc?.genreIds, []);
    assert.equal(searchProjection.evolve(null, changed), null);
  });

  it('tracks distinct provider ids per country and removes them exactly', () => {
    let doc = searchProjection.evolve(null, registered);
    doc = searchProjection.evolve(doc, recorded('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'netflix', webUrl: 'u1' }) }));
    doc = searchProjection.evolve(doc, recorded('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'netflix', webUrl: 'u2' }) }));
    doc = searchProjection.evolve(doc, recorded('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'amazon', webUrl: 'u3' }) }));
    doc = searchProjection.evolve(doc, recorded('OfferChanged', { mediaId, country: 'DE', offer: offer({ providerId: 'wow', webUrl: 'u4' }), changedFields: [] }));
    assert.deepEqual(doc?.availability, { DE: ['wow'], US: ['amazon', 'netflix'] });
    // Counts beside the providers, in their order: one shape whatever the providers.
    assert.deepEqual(doc?.offerCounts, { DE: [1], US: [1, 2] });
    doc = searchProjection.evolve(doc, recorded('OfferRemoved', { mediaId, country: 'US', offer: keyOf('netflix', 'u1') }));
    assert.deepEqual(doc?.availability, { DE: ['wow'], US: ['amazon', 'netflix'] }, 'netflix still offers u2');
    doc = searchProjection.evolve(doc, recorded('OfferRemoved', { mediaId, country: 'US', offer: keyOf('netflix', 'u2') }));
    doc = searchProjection.evolve(doc, recorded('OfferRemoved', { mediaId, country: 'DE', offer: keyOf('wow', 'u4') }));
    assert.deepEqual(doc?.availability, { US: ['amazon'] });
    assert.deepEqual(doc?.offerCounts, { US: [1] });
  });

  it('keeps a stub for offers seen before the registration and fills it in on registration', () => {
    const early = searchProjection.evolve(null, recorded('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'netflix', webUrl: 'u1' }) }));
    assert.equal(early?.registered, false);
    assert.equal(early !== null && toSearchDocument(early, genres), null);
    const full = searchProjection.evolve(early, registered);
    assert.equal(full?.registered, true);
    assert.deepEqual(full?.availability, { US: ['netflix'] });
    assert.equal(full?.title, 'Heat');
  });

  it('deletes a stub whose last offer is removed', () => {
    const early = searchProjection.evolve(null, recorded('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'netflix', webUrl: 'u1' }) }));
    assert.equal(searchProjection.evolve(early, recorded('OfferRemoved', { mediaId, country: 'US', offer: keyOf('netflix', 'u1') })), null);
  });

  it('resolves genre slugs for the index and skips ids missing from the genre table', () => {
    const doc = foldStream(searchProjection, [registered, recorded('OfferAdded', { mediaId, country: 'US', offer: offer() })]);
    assert.ok(doc !== null);
    assert.deepEqual(toSearchDocument(doc, genres), {
      id: mediaId, kind: 'movie', title: 'Heat', originalTitle: 'Heat!', titles: {}, year: 1995, genres: ['drama', 'crime'], popularity: 42,
      availability: { US: ['netflix'] },
    });
    assert.deepEqual(toSearchDocument(doc, [{ id: 80, slug: 'crime', name: 'Crime' }])?.genres, ['crime']);
  });
});

describe('projection index', () => {
  it('lists every read model once, named as readModels.ts declares', () => {
    assert.deepEqual(ALL_PROJECTIONS.map((p) => p.name), ['media', 'media_items', 'seasons', 'links', 'ranking_inputs', 'providers', 'genres', 'collections', 'featured', 'rankings', 'trending', 'availability_history', 'changes', 'arrivals', 'departures', 'upcoming', 'search']);
    assert.deepEqual([...ALL_PROJECTIONS.map((p) => p.name)].sort(), Object.values(READ_MODELS).sort());
    assert.equal(projectionByName('links')?.version, 2);
    assert.equal(projectionByName('nope'), undefined);
  });

  it('names the default physical collection `${name}_v${version}`', () => {
    assert.equal(defaultCollectionName({ name: 'links', version: 3 }), 'links_v3');
  });
});
