import { lmdbEventStore } from './infra/lmdb/eventStore.ts';
const es = lmdbEventStore({ dataDir: process.argv[2]! });
let pos = 0; let n = 0; const t = performance.now();
for (;;) { const b = await es.readAll({ after: pos, limit: 5000 }); if (!b.length) break; n += b.length; pos = b[b.length - 1]!.position; }
console.log('read', n, ((performance.now() - t) / 1000).toFixed(2));
process.exit(0);
