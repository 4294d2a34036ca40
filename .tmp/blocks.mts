import { lmdbReadStore } from '/work/wt/rank3/infra/lmdb/readStore.ts';
const readStore = lmdbReadStore({ dataDir: '/tmp/r3/data' });
const docs = await readStore.scan<any>('links_v1');
for (const cut of [1, 2, 3]) {
  const blocks = new Map<string, number>();
  for (const d of docs) { const k = `${d.doc.country}:${d.doc.mediaId.slice(0, -cut)}`; blocks.set(k, (blocks.get(k) ?? 0) + 1); }
  const sizes = [...blocks.values()];
  console.log(cut, blocks.size, Math.max(...sizes), (docs.length / blocks.size).toFixed(1));
}
