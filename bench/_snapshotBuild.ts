/**
 * Child process of bench/snapshot.ts: builds one release from an existing data directory and
 * prints one JSON line with its time and this process's peak RSS (so the catalog generation
 * in the parent does not count).
 * Usage: node --import tsx bench/_snapshotBuild.ts <dataDir> <releasesDir> <week>
 */
import { randomBytes } from 'node:crypto';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { fsReleaseStore } from '../infra/releases/fsReleaseStore.ts';
import { createLinkTokens } from '../services/links/linkTokens.ts';
import { buildRelease } from '../services/snapshot/build.ts';

const [dataDir, releasesDir, week] = process.argv.slice(2);
if (!dataDir || !releasesDir || !week) throw new Error('usage: _snapshotBuild.ts <dataDir> <releasesDir> <week>');
const readStore = lmdbReadStore({ dataDir });
const linkTokens = createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] });
let peakSampled = 0;
const sampler = setInterval(() => {
  peakSampled = Math.max(peakSampled, process.memoryUsage().rss);
}, 200);
const result = await buildRelease({
  readStore,
  releases: fsReleaseStore({ dir: releasesDir }),
  linkTokens,
  clock: { now: () => new Date('2026-11-21T08:00:00Z') },
  week,
  onProgress: (p) => process.stderr.write(`  ${p.done}/${p.total} ${p.file} (${p.rows} rows, rss ${Math.round(process.memoryUsage().rss / 1048576)} MB)\n`),
});
clearInterval(sampler);
await readStore.close();
console.log(JSON.stringify({
  build_ms: result.durationMs,
  peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  sampled_peak_rss_mb: Math.round(peakSampled / 1048576),
  files: result.manifest.files.length,
  total_bytes: result.manifest.files.reduce((s, f) => s + f.sizeBytes, 0),
  rows: result.rowCounts,
}));
