/**
 * `ranking_inputs` holds exactly what the ranking formula reads of `links` and `media`: the same
 * titles and offers as the links documents, the facts of registered titles, in blocks of 25 ids.
 * (The same on a crawled catalog, entry for entry: test/int/rankingInputs.int.test.ts.)
 */
import assert from 'node:assert/strict';
import type { RecordedEvent } from '../../contracts/events.ts';
import type { RankingFactsBlock, RankingInputsDoc, RankingOffersBlock } from '../../contracts/readModels.ts';
import { foldStream } from '../../projections/fold.ts';
import { packRankingOffer, rankingBlockOf, rankingInputsProjection, rankingOfferKey, unpackRankingOffer } from '../../projections/rankingInputs.ts';
import { offerKeyString } from '../../contracts/domain.ts';
import { details, offer, recorded } from './projectionEvents.ts';

const added = (mediaId: string, o = offer()) => recorded('OfferAdded', { mediaId, country: 'US', offer: o });
const removed = (mediaId: string, o = offer()) => recorded('OfferRemoved', { mediaId, country: 'US', offer: o });

/** Folds each document's events as the runner does, by document id. */
function fold(events: RecordedEvent[]): Map<string, RankingInputsDoc> {
  const ids = [...new Set(events.map((e) => rankingInputsProjection.documentId(e)).filter((id): id is string => id !== null))];
  const out = new Map<string, RankingInputsDoc>();
  for (const id of ids) {
    const doc = foldStream(rankingInputsProjection, events.filter((e) => rankingInputsProjection.documentId(e) === id));
    if (doc !== null) out.set(id, doc);
  }
  return out;
}

describe('ranking_inputs projection', () => {
  it('puts 25 consecutive ids of a country in one block, in id order', () => {
    assert.deepEqual(['mv00012300', 'mv00012324', 'mv00012325', 'mv00012399', 'mv00012400'].map(rankingBlockOf), ['mv0001230', 'mv0001230', 'mv0001231', 'mv0001233', 'mv0001240']);
    assert.equal(rankingInputsProjection.documentId(added('mv00012345')), 'o:US:mv0001231');
    assert.equal(rankingInputsProjection.documentId(recorded('MediaRegistered', { mediaId: 'tv00012345', kind: 'tv_show', sourceId: 12345, slug: 's', details: details() })), 'f:tv0001231');
  });

  it('keeps per title the formula fields of each offer, replaced by key, removed by key, the block deleted when empty', () => {
    const rent = offer({ providerId: 'store', webUrl: 'https://s/1', priceTypes: ['rent'], availableTo: '2026-12-31' });
    const docs = fold([
      added('mv00000002'),
      added('mv00000001', rent),
      added('mv00000001'),
      recorded('OfferChanged', { mediaId: 'mv00000001', country: 'US', offer: { ...rent, priceTypes: ['buy'] }, changedFields: ['priceTypes'] }),
      removed('mv00000002'),
      // An id that names no kind is ignored, as links ignores it.
      added('xx00000003'),
    ]);
    const block = docs.get('o:US:mv0000000') as RankingOffersBlock;
    assert.deepEqual(block.titles, [{
      mediaId: 'mv00000001',
      kind: 'movie',
      offers: ['\t\tflatrate\t7\tnetflix||||https://example.com/watch/1', '\t2026-12-31\tbuy\t5\tstore||||https://s/1'],
    }]);
    assert.deepEqual(block.titles[0]?.offers.map(unpackRankingOffer), [
      { providerId: 'netflix', priceTypes: ['flatrate'], availableFrom: null, availableTo: null },
      { providerId: 'store', priceTypes: ['buy'], availableFrom: null, availableTo: '2026-12-31' },
    ]);
    const gone = fold([added('mv00000001'), removed('mv00000001')]);
    assert.equal(gone.size, 0);
  });

  it('packs an offer in one string that gives back its key and the formula fields, whatever the provider id and URL hold', () => {
    const offers = [
      offer(),
      offer({ providerId: 'tab\tand|pipe', webUrl: 'https://x/\t|\t\t', priceTypes: ['rent', 'buy'], availableFrom: '2026-01-01', availableTo: '2026-02-01' }),
      offer({ providerId: 'p', priceTypes: null }),
      offer({ providerId: 'p', priceTypes: [] }),
      offer({ providerId: 'é🎬', webUrl: '' }),
    ];
    for (const o of offers) {
      const key = offerKeyString(o);
      const packed = packRankingOffer(key, o);
      assert.equal(rankingOfferKey(packed), key);
      assert.deepEqual(unpackRankingOffer(packed), { providerId: o.providerId, priceTypes: o.priceTypes, availableFrom: o.availableFrom, availableTo: o.availableTo });
    }
  });

  it('keeps the offers of a title in key order, each replaced or removed by its key', () => {
    const a = offer({ providerId: 'a', webUrl: 'https://a' });
    const b = offer({ providerId: 'b\tx', webUrl: 'https://b' });
    const c = offer({ providerId: 'c', webUrl: 'https://c' });
    const docs = fold([added('mv00000001', c), added('mv00000001', a), added('mv00000001', b), added('mv00000001', { ...a, priceTypes: ['free'] }), removed('mv00000001', c)]);
    const offers = (docs.get('o:US:mv0000000') as RankingOffersBlock).titles[0]?.offers ?? [];
    assert.deepEqual(offers.map(rankingOfferKey), [offerKeyString(a), offerKeyString(b)]);
    assert.deepEqual(unpackRankingOffer(offers[0] as string).priceTypes, ['free']);
  });

  it('keeps the facts of registered titles; a details change of an unregistered title is ignored', () => {
    const docs = fold([
      recorded('MediaRegistered', { mediaId: 'tv00000007', kind: 'tv_show', sourceId: 7, slug: 's', details: details({ popularity: 3 }) }),
      recorded('MediaDetailsChanged', { mediaId: 'tv00000007', details: details({ popularity: 9, lastAirDate: '2026-01-02' }), changedFields: ['popularity'] }),
      recorded('MediaDetailsChanged', { mediaId: 'tv00000005', details: details(), changedFields: ['popularity'] }),
    ]);
    assert.deepEqual((docs.get('f:tv0000000') as RankingFactsBlock).facts, [
      { mediaId: 'tv00000007', tmdbRating: 7, voteCount: 100, popularity: 9, releaseDate: '2009-09-07', lastAirDate: '2026-01-02', year: 2009 },
    ]);
  });
});
