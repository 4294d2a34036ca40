import type {
  CollectionChanged,
  CollectionPublished,
  CollectionWithdrawn,
  FeaturedSelectionChanged,
  GenreChanged,
  GenreDefined,
  ProviderAdded,
  ProviderChanged,
  ProviderRemoved,
} from '../../contracts/events.ts';
import type { CollectionBody } from '../../contracts/domain.ts';
import { collectionDecider } from '../../services/ingest/collection.ts';
import { featuredDecider } from '../../services/ingest/featured.ts';
import { genresDecider } from '../../services/ingest/genres.ts';
import { providersDecider } from '../../services/ingest/providers.ts';
import {
  collectionObserved,
  ev,
  featuredObserved,
  genresObserved,
  provider,
  providersObserved,
  T0,
  T1,
  T2,
} from './ingestFixtures.ts';
import { refused, specificationFor } from './ingestSpecification.ts';

describe('ingest providers decider', () => {
  const given = specificationFor(providersDecider);
  const added = (id: string, obs = 'p1', at = T0) =>
    ev<ProviderAdded>('ProviderAdded', { country: 'DE', provider: provider(id) }, obs, at);

  it('adds every provider of the first list, sorted by id', () => {
    given([]).when(providersObserved('p1', T0, [provider('netflix'), provider('joyn')], 'de')).then(
      [added('joyn'), added('netflix')],
      'providers-DE',
    );
  });

  it('removes, changes and adds providers against the full list', () => {
    const history = [added('joyn'), added('netflix'), added('wow')];
    given(history).when(providersObserved('p2', T1, [provider('netflix', { weight: 50, logo: '/logos/n.png' }), provider('mubi')], 'DE')).then([
      ev<ProviderRemoved>('ProviderRemoved', { country: 'DE', providerId: 'joyn' }, 'p2', T1),
      ev<ProviderRemoved>('ProviderRemoved', { country: 'DE', providerId: 'wow' }, 'p2', T1),
      ev<ProviderChanged>('ProviderChanged', {
        country: 'DE', provider: provider('netflix', { weight: 50, logo: '/logos/n.png' }), changedFields: ['logo', 'weight'],
      }, 'p2', T1),
      ev<ProviderAdded>('ProviderAdded', { country: 'DE', provider: provider('mubi') }, 'p2', T1),
    ]);
  });

  it('appends nothing for an unchanged list', () => {
    given([added('joyn')]).when(providersObserved('p2', T1, [provider('joyn')], 'DE')).thenSkips(/unchanged providers/);
  });

  it('ignores a redelivered observation id', () => {
    given([added('joyn')]).when(providersObserved('p1', T0, [], 'DE')).thenSkips(/duplicate/);
  });

  it('skips a list older than the last change as stale', () => {
    given([added('joyn', 'p2', T1)]).when(providersObserved('p1', T0, [], 'DE')).thenSkips(/stale/);
  });

  it('rejects a list with the same provider id twice', () => {
    refused(providersObserved('p1', T0, [provider('joyn'), provider('joyn')], 'DE'), /data\.providers: duplicate provider id "joyn"/);
  });

  it('rejects a negative weight', () => {
    refused(providersObserved('p1', T0, [provider('joyn', { weight: -1 })], 'DE'), /data\.providers\[0\]\.weight/);
  });

  it('rejects a provider with an empty name', () => {
    refused(providersObserved('p1', T0, [provider('joyn', { name: ' ' })], 'DE'), /data\.providers\[0\]\.name: must not be empty/);
  });
});

describe('ingest genres decider', () => {
  const given = specificationFor(genresDecider);
  const action = { id: 28, slug: 'action', name: 'Action' };
  const drama = { id: 18, slug: 'drama', name: 'Drama' };
  const defined = (genre: typeof action, obs = 'g1', at = T0) => ev<GenreDefined>('GenreDefined', { genre }, obs, at);

  it('defines new genres in id order', () => {
    given([]).when(genresObserved('g1', T0, [action, drama])).then([defined(drama), defined(action)], 'genres');
  });

  it('records a genre whose slug or name changed, and defines the new ones', () => {
    given([defined(drama), defined(action)]).when(genresObserved('g2', T1, [{ ...action, name: 'Action & Adventure' }, { id: 99, slug: 'documentary', name: 'Documentary' }, drama])).then([
      ev<GenreChanged>('GenreChanged', { genre: { ...action, name: 'Action & Adventure' } }, 'g2', T1),
      ev<GenreDefined>('GenreDefined', { genre: { id: 99, slug: 'documentary', name: 'Documentary' } }, 'g2', T1),
    ]);
  });

  it('never removes a genre missing from a later list', () => {
    given([defined(drama), defined(action)]).when(genresObserved('g2', T1, [drama])).thenSkips(/unchanged genres/);
  });

  it('rejects a genre id that is not an integer', () => {
    refused(genresObserved('g1', T0, [{ ...action, id: 2.5 }]), /data\.genres\[0\]\.id: 2\.5 is not an int/);
  });

  it('rejects a list with the same genre id twice', () => {
    refused(genresObserved('g1', T0, [action, { ...action, slug: 'act' }]), /duplicate genre id "28"/);
  });
});

describe('ingest collection decider', () => {
  const given = specificationFor(collectionDecider);
  const body: CollectionBody = {
    name: 'Best of the 90s', description: null, country: 'US', language: 'en', items: [{ mediaId: 'mv00000603', position: 1 }],
  };
  const published = (obs = 'c1', at = T0) =>
    ev<CollectionPublished>('CollectionPublished', { slug: 'best-of-90s', collection: body }, obs, at);
  const withdrawn = (obs = 'c2', at = T1) => ev<CollectionWithdrawn>('CollectionWithdrawn', { slug: 'best-of-90s' }, obs, at);

  it('publishes a collection the first time, with media ids and an upper-case country', () => {
    given([]).when(collectionObserved('c1', T0)).then([published()], 'collection-best-of-90s');
  });

  it('appends nothing for an unchanged collection', () => {
    given([published()]).when(collectionObserved('c2', T1)).thenSkips(/unchanged collection/);
  });

  it('records a changed body with the names of the changed fields', () => {
    const items = [{ contentType: 'tv_show' as const, sourceId: 1399, position: 1 }, { contentType: 'movie' as const, sourceId: 603, position: 2 }];
    given([published()]).when(collectionObserved('c2', T1, { description: 'Cult classics', items })).then([
      ev<CollectionChanged>('CollectionChanged', {
        slug: 'best-of-90s',
        collection: { ...body, description: 'Cult classics', items: [{ mediaId: 'tv00001399', position: 1 }, { mediaId: 'mv00000603', position: 2 }] },
        changedFields: ['description', 'items'],
      }, 'c2', T1),
    ]);
  });

  it('withdraws a published collection', () => {
    given([published()]).when(collectionObserved('c2', T1, { status: 'withdrawn' })).then([withdrawn()]);
  });

  it('skips a withdrawal of a collection that was never published', () => {
    given([]).when(collectionObserved('c1', T0, { status: 'withdrawn' })).thenSkips(/not published/);
  });

  it('skips a withdrawal of a collection already withdrawn', () => {
    given([published(), withdrawn()]).when(collectionObserved('c3', T2, { status: 'withdrawn' })).thenSkips(/not published/);
  });

  it('publishes again after a withdrawal, even with the same body', () => {
    given([published(), withdrawn()]).when(collectionObserved('c3', T2)).then([published('c3', T2)]);
  });

  it('rejects a slug that cannot name a stream', () => {
    refused(collectionObserved('c1', T0, { slug: 'Best Of 90s' }), /data\.slug/);
  });

  it('rejects an unknown status', () => {
    refused(collectionObserved('c1', T0, { status: 'draft' as never }), /data\.status: "draft" is not one of published, withdrawn/);
  });

  it('rejects a negative item position', () => {
    refused(collectionObserved('c1', T0, { items: [{ contentType: 'movie', sourceId: 603, position: -1 }] }), /data\.items\[0\]\.position: must be >= 0/);
  });
});

describe('ingest featured decider', () => {
  const given = specificationFor(featuredDecider);
  const items = [{ contentType: 'movie' as const, sourceId: 603, position: 1 }, { contentType: 'tv_show' as const, sourceId: 1399, position: 2 }];
  const refs = [{ mediaId: 'mv00000603', position: 1 }, { mediaId: 'tv00001399', position: 2 }];
  const changed = (period: 'daily' | 'weekly', list = refs, obs = 'f1', at = T0) =>
    ev<FeaturedSelectionChanged>('FeaturedSelectionChanged', { country: 'GB', period, items: list }, obs, at);

  it('records the first selection of a period', () => {
    given([]).when(featuredObserved('f1', T0, 'daily', items, 'gb')).then([changed('daily')], 'featured-GB');
  });

  it('appends nothing for an unchanged selection', () => {
    given([changed('daily')]).when(featuredObserved('f2', T1, 'daily', items, 'GB')).thenSkips(/unchanged daily selection/);
  });

  it('records a selection that differs', () => {
    given([changed('daily')]).when(featuredObserved('f2', T1, 'daily', [...items].reverse().map((i, n) => ({ ...i, position: n + 1 })), 'GB')).then([
      changed('daily', [{ mediaId: 'tv00001399', position: 1 }, { mediaId: 'mv00000603', position: 2 }], 'f2', T1),
    ]);
  });

  it('keeps the daily and the weekly selection apart', () => {
    given([changed('daily')]).when(featuredObserved('f2', T1, 'weekly', items, 'GB')).then([changed('weekly', refs, 'f2', T1)]);
  });

  it('judges staleness per period', () => {
    given([changed('daily', refs, 'f2', T2)]).when(featuredObserved('f1', T1, 'weekly', items, 'GB')).then([changed('weekly', refs, 'f1', T1)]);
    given([changed('daily', refs, 'f2', T2)]).when(featuredObserved('f1', T1, 'daily', [], 'GB')).thenSkips(/stale/);
  });

  it('appends nothing for an empty first selection', () => {
    given([]).when(featuredObserved('f1', T0, 'weekly', [], 'GB')).thenSkips(/unchanged weekly/);
  });

  it('rejects an unknown period', () => {
    refused(featuredObserved('f1', T0, 'monthly' as never, items, 'GB'), /data\.period/);
  });

  it('rejects a non-integer position', () => {
    refused(featuredObserved('f1', T0, 'daily', [{ contentType: 'movie', sourceId: 603, position: 1.5 }], 'GB'), /data\.items\[0\]\.position: 1\.5 is not an int/);
  });
});
