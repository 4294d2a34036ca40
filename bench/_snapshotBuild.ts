/**
 * Child process of bench/snapshot.ts: builds one release from an existing data directory and
 * prints one JSON line with its time and this process's peak RSS (so the catalog generation
 * in the parent does not count).
 * Usage: node --import tsx bench/_snapshotBuild.ts <dataDir> <releasesDir> <week> [--threads N] [--link-key HEX]
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { wasmMemory } from 'parquet-wasm';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { lmdbUnmapGroup } from '../infra/lmdb/unmapGroup.ts';
import { fsReleaseStore } from '../infra/releases/fsReleaseStore.ts';
import { createLinkTokens } from '../services/links/linkTokens.ts';
import { BUILD_UNMAP_AFTER_MB, buildRelease } from '../services/snapshot/build.ts';
import type { EncoderName } from '../services/snapshot/parquetEncoder.ts';

const [dataDir, releasesDir, week] = process.argv.slice(2);
if (!dataDir || !releasesDir || !week) throw new Error('usage: _snapshotBuild.ts <dataDir> <releasesDir> <week>');
// As `marquee snapshot build` opens it, with the build threads' stores in its unmap group.
const lmdb = { dataDir, unmapAfterMb: BUILD_UNMAP_AFTER_MB, unmapGroup: lmdbUnmapGroup() };
const readStore = lmdbReadStore(lmdb);
// `--link-key <64 hex>`: a fixed key, so that two builds of the same read models can be compared
// byte for byte (`cmp`); by default a random one, as a real key is.
const keyFlag = process.argv.indexOf('--link-key');
const key = keyFlag >= 0 ? Buffer.from(process.argv[keyFlag + 1] ?? '', 'hex') : randomBytes(32);
if (key.length !== 32) throw new Error('--link-key must be 32 bytes in hex');
const linkKeys = { keys: [{ version: 1, key: new Uint8Array(key) }] };
const linkTokens = createLinkTokens(linkKeys);
// `--threads 0`: the build on this thread (as before build threads), to compare.
const threadsFlag = process.argv.indexOf('--threads');
const threadCount = threadsFlag >= 0 ? Number(process.argv[threadsFlag + 1]) : undefined;
/** Resident memory split: anonymous (heap, wasm, buffers) vs file-backed (LMDB's memory map), in MB. */
function rss(): { anon: number; file: number; wasm: number; heap: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    anon: Math.round(kb('RssAnon') / 1024),
    file: Math.round(kb('RssFile') / 1024),
    // The main thread's wasm only: the encoding threads' (parquetPool.ts) count in `anon`.
    wasm: Math.round(wasmMemory().buffer.byteLength / 1048576),
    heap: Math.round(process.memoryUsage().heapUsed / 1048576),
  };
}
const peak = { anon: 0, file: 0, wasm: 0, heap: 0 };
const sampler = setInterval(() => {
  const now = rss();
  for (const k of Object.keys(peak) as Array<keyof typeof peak>) peak[k] = Math.max(peak[k], now[k]);
}, 100);
const cpuBefore = process.cpuUsage();
const startedAt = Date.now();
// The encoder bench/snapshot.ts asks for (--encoder), else the release's default.
const encoder = process.env.MARQUEE_BENCH_ENCODER as EncoderName | undefined;
const result = await buildRelease({
  readStore,
  ...(encoder ? { parquet: { encoder } } : {}),
  releases: fsReleaseStore({ dir: releasesDir }),
  linkTokens,
  clock: { now: () => new Date('2026-11-21T08:00:00Z') },
  week,
  ...(threadCount === 0 ? {} : { threads: { lmdb, linkKeys, ...(threadCount === undefined ? {} : { count: threadCount }) } }),
  onProgress: (p) => process.stderr.write(`  ${((Date.now() - startedAt) / 1000).toFixed(1)} s ${p.done}/${p.total} ${p.file} (${p.rows} rows, MB ${JSON.stringify(rss())})\n`),
});
clearInterval(sampler);
const cpu = process.cpuUsage(cpuBefore);
await readStore.close();
console.log(JSON.stringify({
  build_ms: result.durationMs,
  // CPU time of this process (all threads) during the build: steadier than wall time on a shared machine.
  build_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
  peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  peak_rss_anon_mb: peak.anon,
  peak_rss_file_mb: peak.file,
  peak_wasm_mb: peak.wasm,
  peak_heap_mb: peak.heap,
  files: result.manifest.files.length,
  total_bytes: result.manifest.files.reduce((s, f) => s + f.sizeBytes, 0),
  rows: result.rowCounts,
}));
