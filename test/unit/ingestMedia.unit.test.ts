import type { MediaDetails } from '../../contracts/domain.ts';
import type {
  MediaDetailsChanged,
  MediaRegistered,
  MediaTranslationChanged,
  SeasonChanged,
} from '../../contracts/events.ts';
import { detailsOf, mediaDecider } from '../../services/ingest/media.ts';
import {
  ev,
  mediaData,
  mediaObserved,
  season,
  seasonsObserved,
  T0,
  T1,
  T2,
  translationObserved,
} from './ingestFixtures.ts';
import { refused, specificationFor } from './ingestSpecification.ts';

const given = specificationFor(mediaDecider);

const details = (overrides = {}): MediaDetails => detailsOf(mediaData(overrides));
const registered = (id = 'o1', at = T0, overrides = {}) =>
  ev<MediaRegistered>('MediaRegistered', {
    mediaId: 'mv00000603', kind: 'movie', sourceId: 603, slug: 'the-matrix-1999', details: details(overrides),
  }, id, at);
const show = (id = 'o1', at = T0) =>
  ev<MediaRegistered>('MediaRegistered', {
    mediaId: 'tv00001399', kind: 'tv_show', sourceId: 1399, slug: 'game-of-thrones-2011',
    details: details({ contentType: 'tv_show', sourceId: 1399, title: 'Game of Thrones', year: 2011 }),
  }, id, at);

describe('ingest media decider', () => {
  describe('MediaObserved', () => {
    it('registers a title the first time it is observed, with a slug of title and year', () => {
      given([]).when(mediaObserved('o1', T0)).then([registered()], 'media-mv00000603');
    });

    it('registers a title of unknown year with a slug of the title alone', () => {
      given([]).when(mediaObserved('o1', T0, { year: null })).then([
        ev<MediaRegistered>('MediaRegistered', {
          mediaId: 'mv00000603', kind: 'movie', sourceId: 603, slug: 'the-matrix', details: details({ year: null }),
        }, 'o1', T0),
      ]);
    });

    it('routes a TV show to a tv media stream', () => {
      given([]).when(mediaObserved('o1', T0, { contentType: 'tv_show', sourceId: 1399, title: 'Game of Thrones', year: 2011 }))
        .then([show()], 'media-tv00001399');
    });

    it('upper-cases the countries of content ratings', () => {
      given([]).when(mediaObserved('o1', T0, { contentRatings: [{ country: 'de', rating: '16' }] })).then([
        ev<MediaRegistered>('MediaRegistered', {
          mediaId: 'mv00000603', kind: 'movie', sourceId: 603, slug: 'the-matrix-1999',
          details: { ...details(), contentRatings: [{ country: 'DE', rating: '16' }] },
        }, 'o1', T0),
      ]);
    });

    it('appends nothing for an unchanged re-crawl', () => {
      given([registered()]).when(mediaObserved('o2', T1)).thenSkips(/unchanged/);
    });

    it('treats equal arrays built anew as unchanged (deep comparison)', () => {
      const again = mediaObserved('o2', T1, { cast: [{ personId: 'p6384', name: 'Keanu Reeves', role: 'actor', character: 'Neo', order: 0 }] });
      given([registered()]).when(again).thenSkips(/unchanged/);
    });

    it('records changed details with the full new details and the names of the changed fields', () => {
      const cast = [
        { personId: 'p6384', name: 'Keanu Reeves', role: 'actor', character: 'Neo', order: 0 },
        { personId: 'p2975', name: 'Laurence Fishburne', role: 'actor', character: 'Morpheus', order: 1 },
      ];
      given([registered()]).when(mediaObserved('o2', T1, { voteCount: 25100, cast })).then([
        ev<MediaDetailsChanged>('MediaDetailsChanged', {
          mediaId: 'mv00000603', details: details({ voteCount: 25100, cast }), changedFields: ['voteCount', 'cast'],
        }, 'o2', T1),
      ]);
    });

    it('ignores a redelivered observation id', () => {
      given([registered('o1', T0)]).when(mediaObserved('o1', T0, { voteCount: 1 })).thenSkips(/duplicate observation o1/);
    });

    it('skips an observation older than the last change as stale', () => {
      given([registered('o1', T1)]).when(mediaObserved('o0', T0, { title: 'Old Title' })).thenSkips(/stale/);
    });

    it('compares observation times across UTC offsets', () => {
      // 11:00+02:00 is 09:00Z, an hour before T0 (10:00Z).
      given([registered('o1', T0)]).when(mediaObserved('o0', '2025-03-01T11:00:00+02:00', { title: 'Old' })).thenSkips(/stale/);
      given([registered('o1', T0)]).when(mediaObserved('o2', '2025-03-01T13:00:00+02:00', { title: 'New' })).then([
        ev<MediaDetailsChanged>('MediaDetailsChanged', {
          mediaId: 'mv00000603', details: details({ title: 'New' }), changedFields: ['title'],
        }, 'o2', '2025-03-01T13:00:00+02:00'),
      ]);
    });

    it('accepts an observation with the same time as the last change', () => {
      given([registered('o1', T0)]).when(mediaObserved('o2', T0, { runtime: 137 })).then([
        ev<MediaDetailsChanged>('MediaDetailsChanged', {
          mediaId: 'mv00000603', details: details({ runtime: 137 }), changedFields: ['runtime'],
        }, 'o2', T0),
      ]);
    });
  });

  describe('MediaTranslationObserved', () => {
    const translation = { title: 'Matrix', overview: 'Ein Hacker erfährt die Wahrheit.', tagline: null, poster: null, backdrop: null };
    const translated = (id = 't1', at = T1) =>
      ev<MediaTranslationChanged>('MediaTranslationChanged', { mediaId: 'mv00000603', language: 'de', translation }, id, at);

    it('rejects a translation of a title that is not registered', () => {
      given([]).when(translationObserved('t1', T1)).thenRejects(/media not registered/);
    });

    it('records a new translation of a registered title', () => {
      given([registered()]).when(translationObserved('t1', T1)).then([translated()], 'media-mv00000603');
    });

    it('appends nothing for an unchanged translation', () => {
      given([registered(), translated()]).when(translationObserved('t2', T2)).thenSkips(/unchanged translation de/);
    });

    it('records a translation that differs', () => {
      given([registered(), translated()]).when(translationObserved('t2', T2, { tagline: 'Willkommen in der Wirklichkeit.' })).then([
        ev<MediaTranslationChanged>('MediaTranslationChanged', {
          mediaId: 'mv00000603', language: 'de', translation: { ...translation, tagline: 'Willkommen in der Wirklichkeit.' },
        }, 't2', T2),
      ]);
    });

    it('judges staleness per language, not against newer details', () => {
      // Details changed at T2, the translation was crawled at T1: still news for `de`.
      given([registered('o1', T2)]).when(translationObserved('t1', T1)).then([translated('t1', T1)]);
    });

    it('skips a translation older than the last change of that language', () => {
      given([registered(), translated('t1', T2)]).when(translationObserved('t0', T1, { title: 'Alt' })).thenSkips(/stale/);
    });

    it('rejects a malformed language code', () => {
      refused(translationObserved('t1', T1, { language: 'German!' }), /data\.language/);
    });
  });

  describe('SeasonsObserved', () => {
    const changed = (s: ReturnType<typeof season>, id: string, at: string) =>
      ev<SeasonChanged>('SeasonChanged', { mediaId: 'tv00001399', season: s }, id, at);

    it('rejects seasons of a show that is not registered', () => {
      given([]).when(seasonsObserved('s1', T1, [season(1)])).thenRejects(/media not registered/);
    });

    it('records one SeasonChanged per new season, in season order', () => {
      given([show()]).when(seasonsObserved('s1', T1, [season(2), season(1)])).then(
        [changed(season(1), 's1', T1), changed(season(2), 's1', T1)],
        'media-tv00001399',
      );
    });

    it('records only the seasons that differ and leaves absent seasons alone', () => {
      const history = [show(), changed(season(1), 's1', T1), changed(season(2), 's1', T1)];
      given(history).when(seasonsObserved('s2', T2, [season(2, 'Season 2', 3)])).then([changed(season(2, 'Season 2', 3), 's2', T2)]);
    });

    it('appends nothing when every observed season is unchanged', () => {
      const history = [show(), changed(season(1), 's1', T1)];
      given(history).when(seasonsObserved('s2', T2, [season(1)])).thenSkips(/unchanged seasons/);
    });

    it('rejects an observation with a season number twice', () => {
      refused(seasonsObserved('s1', T1, [season(1), season(1)]), /data\.seasons: duplicate season number/);
    });

    it('rejects a negative episode number', () => {
      const bad = { ...season(1), episodes: [{ episodeNumber: -1, title: 'Pilot', overview: null, backdrop: null, airDate: null }] };
      refused(seasonsObserved('s1', T1, [bad]), /data\.seasons\[0\]\.episodes\[0\]\.episodeNumber: must be >= 0/);
    });

    it('rejects a negative season number', () => {
      refused(seasonsObserved('s1', T1, [season(-2)]), /data\.seasons\[0\]\.seasonNumber/);
    });
  });
});
