import { lmdbReadStore } from '/work/wt/rank3/infra/lmdb/readStore.ts';
import { priceFactor } from '/work/wt/rank3/services/ranking/formula.ts';
import { pack } from 'msgpackr';
const readStore = lmdbReadStore({ dataDir: '/tmp/r3/data' });
const docs = await readStore.scan<any>('links_v1');
let offers = 0, distinct = 0, bytes = 0, urlBytes = 0, keyBytes = 0, compact = 0, maxOffers = 0;
const ids = new Set<string>();
for (const d of docs) {
  offers += d.doc.offers.length; maxOffers = Math.max(maxOffers, d.doc.offers.length);
  const s = new Set(d.doc.offers.map((o: any) => [o.providerId, priceFactor(o.priceTypes), o.availableFrom, o.availableTo].join('|')));
  distinct += s.size; bytes += pack(d.doc).length; ids.add(d.doc.mediaId);
  for (const o of d.doc.offers) { urlBytes += o.webUrl.length; keyBytes += [o.providerId, o.addonProviderId ?? '', o.seasonNumber ?? '', o.episodeNumber ?? '', o.webUrl].join('|').length; }
  compact += pack([...s]).length;
}
console.log({ docs: docs.length, offers, distinct, maxOffers, bytes, urlBytes, keyBytes, compact, titles: ids.size });
console.log([...ids].sort().slice(0, 5), [...ids].sort().slice(-5));
const media = await readStore.scan<any>('media_v1'); console.log('media', media.length, media.reduce((s, d) => s + pack(d.doc).length, 0));
console.log(docs[0].doc.offers[0]);
