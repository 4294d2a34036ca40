/**
 * Builds one release from an existing data directory with a fixed link key and clock, so two
 * builds of the same read models (before and after a change to the builder) can be compared
 * byte for byte: `cmp` every file of the two release directories.
 * Usage: node --import tsx bench/_snapshotRelease.ts <dataDir> <releasesDir> [week] [--threads N]
 * Prints one JSON line: the build's time and its files.
 */
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { fsReleaseStore } from '../infra/releases/fsReleaseStore.ts';
import { DEVELOPMENT_LINK_KEY_HEX, createLinkTokens } from '../services/links/linkTokens.ts';
import { buildRelease } from '../services/snapshot/build.ts';

const [dataDir, releasesDir, week = '2026-W47'] = process.argv.slice(2).filter((a, i, all) => a !== '--threads' && all[i - 1] !== '--threads');
if (!dataDir || !releasesDir) throw new Error('usage: _snapshotRelease.ts <dataDir> <releasesDir> [week]');
const key = Uint8Array.from(DEVELOPMENT_LINK_KEY_HEX.match(/../g) ?? [], (h) => parseInt(h, 16));
const readStore = lmdbReadStore({ dataDir });
const linkKeys = { keys: [{ version: 1, key }] };
// `--threads 0`: the build on this thread alone (build threads otherwise, as `marquee snapshot build`).
const threadsFlag = process.argv.indexOf('--threads');
const threadCount = threadsFlag >= 0 ? Number(process.argv[threadsFlag + 1]) : undefined;
const cpu = process.cpuUsage();
const mainCpu = process.threadCpuUsage();
const result = await buildRelease({
  readStore,
  releases: fsReleaseStore({ dir: releasesDir }),
  linkTokens: createLinkTokens(linkKeys),
  clock: { now: () => new Date('2026-11-21T08:00:00Z') },
  week,
  ...(threadCount === 0 ? {} : { threads: { lmdb: { dataDir }, linkKeys, ...(threadCount === undefined ? {} : { count: threadCount }) } }),
});
await readStore.close();
const ms = (u: { user: number; system: number }): number => Math.round((u.user + u.system) / 1000);
console.log(JSON.stringify({ build_ms: result.durationMs, cpu_ms: ms(process.cpuUsage(cpu)), main_thread_cpu_ms: ms(process.threadCpuUsage(mainCpu)), peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), files: result.manifest.files.map((f) => f.path) }));
