import { inProcessSearchIndex } from './infra/search/inProcessSearch.ts';
import { tokenize } from './infra/search/normalize.ts';
import { movieDocuments, showDocuments } from './test/unit/searchQualityCatalog.ts';
const docs = [...movieDocuments(), ...showDocuments()];
const index = inProcessSearchIndex();
await index.upsert(docs);
const freq = new Map<string, number>();
for (const d of docs) for (const t of tokenize(d.title)) freq.set(t, (freq.get(t) ?? 0) + 1);
const vocab = [...freq].sort((a, b) => b[1] - a[1]).map(([t]) => t).filter((t) => t.length >= 9 && t.length <= 12 && /^[a-z]+$/.test(t));
const typo = (w: string) => w.slice(0, 2) + w[3] + w[2] + w.slice(4, -1) + 'x';
const out: string[] = []; for (const w of vocab.map(typo)) { if (out.length >= 20 || [...out, w].join(' ').length > 200) break; out.push(w); }
const q = out.join(' ');
const variant = process.argv[2];
const t = performance.now();
for (let i = 0; i < 100; i++) await index.search({ q, country: 'US', lang: 'en', limit: 20, offset: 0 });
console.log((performance.now() - t) / 100);
