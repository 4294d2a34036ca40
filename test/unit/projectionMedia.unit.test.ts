import assert from 'node:assert/strict';
import type { Season } from '../../contracts/domain.ts';
import type { MediaDoc, SeasonsDoc } from '../../contracts/readModels.ts';
import { mediaProjection } from '../../projections/media.ts';
import { mediaItemsProjection } from '../../projections/mediaItems.ts';
import { seasonsProjection } from '../../projections/seasons.ts';
import { details, observedAt, recorded } from './projectionEvents.ts';

const registered = recorded(
  'MediaRegistered',
  { mediaId: 'tv00000042', kind: 'tv_show', sourceId: 42, slug: 'the-land-girls', details: details() },
  { ...observedAt('2026-02-03T23:59:00Z'), recordedAt: '2026-02-05T10:00:00Z' },
);

const doc: MediaDoc = {
  id: 'tv00000042',
  kind: 'tv_show',
  sourceId: 42,
  slug: 'the-land-girls',
  details: details(),
  translations: {},
  firstSeenAt: '2026-02-03',
};

describe('media projection', () => {
  it('routes media events to the media id and ignores seasons', () => {
    assert.equal(mediaProjection.documentId(registered), 'tv00000042');
    assert.equal(mediaProjection.canHandle.includes('SeasonChanged'), false);
  });

  it('creates the document on MediaRegistered with firstSeenAt from the observed date', () => {
    assert.deepEqual(mediaProjection.evolve(null, registered), doc);
  });

  it('falls back to the recorded date for firstSeenAt when nothing was observed', () => {
    const event = recorded(
      'MediaRegistered',
      { mediaId: 'mv00000001', kind: 'movie', sourceId: 1, slug: 'x', details: details() },
      { recordedAt: '2026-01-09T08:00:00Z' },
    );
    assert.equal(mediaProjection.evolve(null, event)?.firstSeenAt, '2026-01-09');
  });

  it('keeps translations and firstSeenAt when a registration is folded again', () => {
    const stored: MediaDoc = { ...doc, firstSeenAt: '2025-12-31', translations: { de: { title: 'Landmädchen', overview: null, tagline: null, poster: null, backdrop: null } } };
    const again = mediaProjection.evolve(stored, registered);
    assert.equal(again?.firstSeenAt, '2025-12-31');
    assert.deepEqual(again?.translations, stored.translations);
  });

  it('replaces the details on MediaDetailsChanged', () => {
    const newDetails = details({ title: 'Land Girls', popularity: 99 });
    const event = recorded('MediaDetailsChanged', { mediaId: 'tv00000042', details: newDetails, changedFields: ['title', 'popularity'] });
    assert.deepEqual(mediaProjection.evolve(doc, event), { ...doc, details: newDetails });
  });

  it('keeps no document when details change for a title never registered', () => {
    const event = recorded('MediaDetailsChanged', { mediaId: 'tv00000042', details: details(), changedFields: [] });
    assert.equal(mediaProjection.evolve(null, event), null);
  });

  it('adds and replaces translation overlays by language, keys sorted', () => {
    const fr = { title: 'Les filles', overview: 'o', tagline: null, poster: null, backdrop: null };
    const de1 = { title: 'Erst', overview: null, tagline: null, poster: null, backdrop: null };
    const de2 = { ...de1, title: 'Zweit' };
    let d = mediaProjection.evolve(doc, recorded('MediaTranslationChanged', { mediaId: 'tv00000042', language: 'fr', translation: fr }));
    d = mediaProjection.evolve(d, recorded('MediaTranslationChanged', { mediaId: 'tv00000042', language: 'de', translation: de1 }));
    d = mediaProjection.evolve(d, recorded('MediaTranslationChanged', { mediaId: 'tv00000042', language: 'de', translation: de2 }));
    assert.deepEqual(d?.translations, { de: de2, fr });
    assert.deepEqual(Object.keys(d?.translations ?? {}), ['de', 'fr']);
  });

  it('keeps no document when a translation arrives for a title never registered', () => {
    const t = { title: 'x', overview: null, tagline: null, poster: null, backdrop: null };
    assert.equal(mediaProjection.evolve(null, recorded('MediaTranslationChanged', { mediaId: 'tv00000042', language: 'de', translation: t })), null);
  });
});

function season(n: number, episodeNumbers: number[], title = `Season ${n}`): Season {
  return {
    seasonNumber: n,
    title,
    overview: null,
    poster: null,
    airDate: null,
    episodes: episodeNumbers.map((e) => ({ episodeNumber: e, title: `E${e}`, overview: null, backdrop: null, airDate: null })),
  };
}

describe('seasons projection', () => {
  it('creates the document from the first SeasonChanged, episodes by number', () => {
    const event = recorded('SeasonChanged', { mediaId: 'tv00000042', season: season(2, [3, 1, 2]) });
    assert.equal(seasonsProjection.documentId(event), 'tv00000042');
    assert.deepEqual(seasonsProjection.evolve(null, event), { mediaId: 'tv00000042', seasons: [season(2, [1, 2, 3])] });
  });

  it('keeps seasons sorted by number and replaces the changed season', () => {
    const stored: SeasonsDoc = { mediaId: 'tv00000042', seasons: [season(1, [1]), season(3, [1])] };
    const added = seasonsProjection.evolve(stored, recorded('SeasonChanged', { mediaId: 'tv00000042', season: season(2, [1]) }));
    assert.deepEqual(added?.seasons.map((s) => s.seasonNumber), [1, 2, 3]);
    const replaced = seasonsProjection.evolve(added, recorded('SeasonChanged', { mediaId: 'tv00000042', season: season(1, [1, 2], 'Renamed') }));
    assert.deepEqual(replaced, { mediaId: 'tv00000042', seasons: [season(1, [1, 2], 'Renamed'), season(2, [1]), season(3, [1])] });
  });

  it('gives the same document when the same event is folded twice', () => {
    const event = recorded('SeasonChanged', { mediaId: 'tv00000042', season: season(1, [1]) });
    const once = seasonsProjection.evolve(null, event);
    assert.deepEqual(seasonsProjection.evolve(once, event), once);
  });
});

describe('media_items projection', () => {
  it('keeps only the fields of a list item, from the registration', () => {
    const item = mediaItemsProjection.evolve(null, registered);
    const d = details();
    assert.deepEqual(item, {
      id: 'tv00000042',
      kind: 'tv_show',
      slug: 'the-land-girls',
      title: d.title,
      originalTitle: d.originalTitle,
      year: d.year,
      poster: d.poster,
      backdrop: d.backdrop,
      genreIds: d.genreIds,
      popularity: d.popularity,
      tmdbRating: d.tmdbRating,
    });
  });

  it('follows changed details and ignores details of a title never registered', () => {
    const changed = recorded('MediaDetailsChanged', { mediaId: 'tv00000042', details: details({ title: 'Land Girls', popularity: 7.5 }), changedFields: ['title', 'popularity'] });
    const item = mediaItemsProjection.evolve(mediaItemsProjection.evolve(null, registered), changed);
    assert.equal(item?.title, 'Land Girls');
    assert.equal(item?.popularity, 7.5);
    assert.equal(item?.slug, 'the-land-girls', 'the slug is fixed at registration');
    assert.equal(mediaItemsProjection.evolve(null, changed), null);
    assert.equal(mediaItemsProjection.documentId(changed), 'tv00000042');
  });
});
