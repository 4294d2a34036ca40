/**
 * `npm run bench -- snapshot [--titles N] [--countries N] [--data DIR] [--heap-mb N] [--build-threads N] [--encoder arrow-rs|parquet-wasm] [--rounds N]`
 *
 * The weekly release of a synthetic catalog (default 50,000 titles, 4 countries; `--titles
 * 250000` for the full figure), measured three ways in one run, and printed as one JSON line:
 *
 * - `build_s`: our whole build, end to end (read models -> link tokens -> Parquet -> tar.gz ->
 *   published release), in a child process so its peak RSS is the build's alone.
 * - `write_s`: our pure write phase: every Parquet file's rows already in memory (read back
 *   from the release, not timed) -> Parquet files with our writer (timed), handed out as a
 *   build hands out its work: the build's tasks (media pass, seasons pass, small read models,
 *   countries) in its order, each to the first of its threads free, each thread building and
 *   encoding its files as the build's do (the media pass on a helper thread). Measured, wall
 *   clock and the CPU of every thread, from the first task to the last file (_snapshotWrite.ts).
 * - `duckdb_write_s`: DuckDB writing the very same rows with ZSTD: each file read into a table
 *   (not timed), then `COPY ... (FORMAT parquet, COMPRESSION zstd)` (timed), with DuckDB's
 *   default threads and again with one thread.
 *
 * `--encoder parquet-wasm` has both of ours encode with parquet-wasm, as releases were made
 * before services/snapshot/parquetWriterWasm.ts (the same bytes); the default is the release's
 * own encoder (`encoder` in the JSON line).
 *
 * With `--rounds N` (default 1) the build, the write phase and DuckDB's write (default threads)
 * run N times, alternated, each round beside its own reference: the fields are the first
 * round's, `rounds` lists every round's times and ratios, `median_build_over_duckdb_write` and
 * `median_write_over_duckdb_write` their medians (steadier on a shared machine than one round),
 * and `max_peak_rss_mb` the highest peak of the builds.
 *
 * Sizes are the Parquet bytes of the release beside DuckDB's for the same rows. Peak RSS is
 * split into anonymous memory (heap, wasm, buffers) and file-backed pages (LMDB's memory map
 * of the read models: clean pages the kernel can drop), sampled every 100 ms. Progress goes to
 * stderr. Not a test: nothing here gates CI on absolute times.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { extractTarGz } from '../services/snapshot/tarball.ts';
import { encoderName } from '../services/snapshot/parquetEncoder.ts';
import { CATALOG_MODELS, catalogCollection, writeSyntheticCatalog } from './_snapshotCatalog.ts';
import { median } from './_stats.ts';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const titles = flag('titles', 50_000);
const rounds = flag('rounds', 1);
const countries = flag('countries', 4);
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'marquee-bench-snapshot-'));
const WEEK = '2026-W47';
// `--data <dir>` keeps the generated catalog there and reuses it on the next run (generating
// 250,000 titles takes minutes); the titles/countries flags must match the first run.
const dataFlag = process.argv.indexOf('--data');
const dataDir = dataFlag >= 0 && process.argv[dataFlag + 1] ? (process.argv[dataFlag + 1] as string) : join(dir, 'data');
// `--build-threads N`: the build's threads (0: the build on its calling thread, as before them).
const buildThreadsFlag = process.argv.indexOf('--build-threads');
const buildThreads = buildThreadsFlag >= 0 ? ['--threads', String(Number(process.argv[buildThreadsFlag + 1]))] : [];
// Both children encode with it (MARQUEE_BENCH_ENCODER: _snapshotBuild.ts, _snapshotWriteThread.ts).
const encoderFlag = process.argv.indexOf('--encoder');
const encoder = encoderFlag >= 0 ? process.argv[encoderFlag + 1] : encoderName();
if (encoder !== 'arrow-rs' && encoder !== 'parquet-wasm') throw new Error('--encoder: arrow-rs or parquet-wasm');
const log = (line: string): void => {
  process.stderr.write(`[snapshot bench] ${line}\n`);
};
const seconds = (ms: number): number => Number((ms / 1000).toFixed(2));
const ratio = (a: number, b: number): number => Number((a / b).toFixed(2));

/**
 * Runs a bench child with tsx; returns its last stdout line as JSON. With a 64 MB young
 * generation (`bin/marquee.js` gives 128: the build's CPU measured the same with 16, 64 and
 * 128), without allocation-site pretenuring (as `bin/marquee.js` runs every command) and with
 * the old generation's start `bin/marquee.js` gives `snapshot build`, so the build is
 * measured as that command runs it (the write phase too, so that both collect alike).
 */
function child<T>(args: string[], heapMb: number): T {
  const out = execFileSync(process.execPath, ['--max-semi-space-size=64', '--no-allocation-site-pretenuring', `--max-old-space-size=${heapMb}`, '--initial-old-space-size=128', '--import', 'tsx', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, MARQUEE_BENCH_ENCODER: encoder },
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as T;
}

/** CPU time (all threads of this process) since `since`, in ms. */
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

async function duckWrite(duck: DuckDBConnection, files: string[], outDir: string): Promise<{ ms: number; cpuMs: number; bytes: number; rows: number }> {
  const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;
  let ms = 0;
  let cpu = 0;
  let bytes = 0;
  let rows = 0;
  for (const [i, file] of files.entries()) {
    await duck.run(`CREATE OR REPLACE TABLE t AS SELECT * FROM read_parquet(${lit(file)}, hive_partitioning = false)`);
    const target = join(outDir, `duck-${i}.parquet`);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await duck.run(`COPY t TO ${lit(target)} (FORMAT parquet, COMPRESSION zstd)`);
    ms += performance.now() - started;
    cpu += cpuMs(cpuBefore);
    bytes += statSync(target).size;
    const counted = await duck.runAndReadAll('SELECT count(*)::BIGINT AS n FROM t');
    rows += Number(counted.getRowObjectsJson()[0]?.n ?? 0);
    rmSync(target);
  }
  return { ms, cpuMs: cpu, bytes, rows };
}

try {
  let links = 0;
  // The marker names the collections the catalog was written to: a catalog kept from before a
  // read model's version went up sits in the old one, where a build would find nothing.
  const markerPath = join(dataDir, 'generated');
  const collections = CATALOG_MODELS.map(catalogCollection);
  const marker = existsSync(markerPath) ? (JSON.parse(readFileSync(markerPath, 'utf8')) as { links?: number; collections?: string[] }) : null;
  if (marker !== null && JSON.stringify(marker.collections) !== JSON.stringify(collections)) {
    log(`the catalog in ${dataDir} is in collections of other read-model versions: generating it again`);
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!existsSync(markerPath)) {
    log(`generating a catalog of ${titles} titles in ${countries} countries into ${dataDir}`);
    const readStore = lmdbReadStore({ dataDir });
    const generated = await writeSyntheticCatalog(readStore, {
      titles,
      countries,
      onProgress: (done, total) => {
        if (done % 25_000 === 0 || done === total) log(`catalog ${done}/${total}`);
      },
    });
    links = generated.links;
    await readStore.close();
    writeFileSync(markerPath, JSON.stringify({ links: generated.links, collections }));
  } else {
    links = Number(marker?.links);
    log(`reusing the catalog in ${dataDir}`);
  }

  // 1. Our build, end to end. The build's live heap is small (bounded chunks); the cap keeps V8
  // from letting the garbage of decoding a million read-model documents pile up first.
  log('building the release (ours, end to end)');
  const build = (releases: string) =>
    child<{
      build_ms: number; build_cpu_ms: number; peak_rss_mb: number; peak_rss_anon_mb: number; peak_rss_file_mb: number;
      peak_wasm_mb: number; peak_heap_mb: number; files: number; total_bytes: number;
    }>([join(here, '_snapshotBuild.ts'), dataDir, releases, WEEK, ...buildThreads], flag('heap-mb', 384));
  const ours = build(join(dir, 'releases'));
  log(`built in ${seconds(ours.build_ms)} s`);

  // Every Parquet file of the release, the bundle's extracted.
  const release = join(dir, 'releases', WEEK);
  await extractTarGz(join(release, 'metadata.tar.gz'), join(dir, 'metadata'));
  const parquetFiles: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.parquet')) parquetFiles.push(p);
    }
  };
  walk(release);
  walk(join(dir, 'metadata'));
  const oursParquetBytes = parquetFiles.reduce((sum, f) => sum + statSync(f).size, 0);

  // 2. Our pure write phase over the same rows (its own process: it holds a file's rows at once).
  log(`writing the same rows again (ours, write phase only, ${parquetFiles.length} files)`);
  // --expose-gc: each thread collects the garbage of reading the rows back before the writes.
  // --external-memory-accounted-in-global-limit: the rows read back (1.4-1.8 GB of heap per
  // thread at 250,000 titles, which a build never holds) were otherwise marked whole whenever
  // the Parquet bytes and IPC buffers (external memory) grew by some 64 MB: ~1.2 s of CPU per
  // thread, where the same collection in a build, its heap small, costs milliseconds.
  const writeAll = (writeDir: string) => {
    mkdirSync(writeDir);
    const written = child<{ write_ms: number; write_cpu_ms: number; bytes: number; rows: number; per_task_ms: Record<string, unknown> }>(
      ['--expose-gc', '--external-memory-accounted-in-global-limit', join(here, '_snapshotWrite.ts'), writeDir, ...parquetFiles],
      4096,
    );
    rmSync(writeDir, { recursive: true, force: true });
    return written;
  };
  const write = writeAll(join(dir, 'rewrite'));

  // 3. DuckDB writing the same rows, default threads, then one thread.
  const duckDir = join(dir, 'duck');
  mkdirSync(duckDir);
  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  const threads = Number((await duck.runAndReadAll("SELECT current_setting('threads')::BIGINT AS n")).getRowObjectsJson()[0]?.n ?? 0);
  log(`DuckDB writing the same rows (${threads} threads)`);
  const duckAll = await duckWrite(duck, parquetFiles, duckDir);
  await duck.run('SET threads = 1');
  log('DuckDB writing the same rows (1 thread)');
  const duckOne = await duckWrite(duck, parquetFiles, duckDir);
  await duck.run(`SET threads = ${threads}`);

  // 4. `--rounds N`: the build, the write phase and DuckDB's write again, each round beside its
  // own reference; the write phase and DuckDB rewrite the first round's Parquet files, so every
  // round writes the very same rows.
  const perRound = [{ build_ms: ours.build_ms, write_ms: write.write_ms, duck_ms: duckAll.ms, peak_rss_mb: ours.peak_rss_mb }];
  for (let r = 2; r <= rounds; r++) {
    log(`round ${r} of ${rounds}: the build, the write phase and DuckDB again`);
    const releases = join(dir, `releases-${r}`);
    const again = build(releases);
    rmSync(releases, { recursive: true, force: true });
    const rewritten = writeAll(join(dir, `rewrite-${r}`));
    const duckAgain = await duckWrite(duck, parquetFiles, duckDir);
    perRound.push({ build_ms: again.build_ms, write_ms: rewritten.write_ms, duck_ms: duckAgain.ms, peak_rss_mb: again.peak_rss_mb });
  }
  duck.closeSync();
  instance.closeSync();
  const roundsOut = perRound.map((r) => ({
    build_s: seconds(r.build_ms),
    write_s: seconds(r.write_ms),
    duckdb_write_s: seconds(r.duck_ms),
    build_over_duckdb_write: ratio(r.build_ms, r.duck_ms),
    write_over_duckdb_write: ratio(r.write_ms, r.duck_ms),
    peak_rss_mb: r.peak_rss_mb,
  }));
  const roundFields =
    rounds === 1
      ? {}
      : {
        rounds: roundsOut,
        median_build_over_duckdb_write: median(roundsOut.map((r) => r.build_over_duckdb_write)),
        median_write_over_duckdb_write: median(roundsOut.map((r) => r.write_over_duckdb_write)),
        max_peak_rss_mb: Math.max(...roundsOut.map((r) => r.peak_rss_mb)),
      };

  console.log(JSON.stringify({
    bench: 'snapshot',
    encoder,
    titles,
    countries,
    links,
    rows: duckAll.rows,
    parquet_files: parquetFiles.length,
    build_s: seconds(ours.build_ms),
    build_cpu_s: seconds(ours.build_cpu_ms),
    write_s: seconds(write.write_ms),
    write_cpu_s: seconds(write.write_cpu_ms),
    duckdb_write_s: seconds(duckAll.ms),
    duckdb_write_cpu_s: seconds(duckAll.cpuMs),
    duckdb_threads: threads,
    duckdb_write_1thread_s: seconds(duckOne.ms),
    parquet_bytes: oursParquetBytes,
    write_bytes: write.bytes,
    duckdb_bytes: duckAll.bytes,
    release_bytes: ours.total_bytes,
    ratios: {
      build_over_duckdb_write: ratio(ours.build_ms, duckAll.ms),
      write_over_duckdb_write: ratio(write.write_ms, duckAll.ms),
      write_over_duckdb_write_1thread: ratio(write.write_ms, duckOne.ms),
      // CPU time (all threads) rather than wall time: steadier on a shared machine.
      build_cpu_over_duckdb_write_cpu: ratio(ours.build_cpu_ms, duckAll.cpuMs),
      write_cpu_over_duckdb_write_cpu: ratio(write.write_cpu_ms, duckAll.cpuMs),
      size_over_duckdb: Number((oursParquetBytes / duckAll.bytes).toFixed(3)),
    },
    peak_rss_mb: ours.peak_rss_mb,
    peak_rss_anon_mb: ours.peak_rss_anon_mb,
    peak_rss_file_mb: ours.peak_rss_file_mb,
    peak_wasm_mb: ours.peak_wasm_mb,
    peak_heap_mb: ours.peak_heap_mb,
    write_tasks: write.per_task_ms,
    ...roundFields,
    note:
      'build_s: ours end to end (LMDB read models, link-token encryption, Parquet, tar.gz, publish). write_s: ours from rows in memory to Parquet files, measured as a build hands out its work: its tasks (media pass on a helper thread, seasons pass, small read models, each country) in its order, each to the first of its threads free, the files of a pass written together (write_tasks: each task\'s thread, wall ms and that thread\'s CPU ms). ' +
      '*_cpu_s: CPU time of every thread of the process over the same span. ' +
      'duckdb_write_s: DuckDB COPY of the same rows from an in-memory table. peak_rss_file_mb is LMDB\'s memory map (clean file pages), peak_rss_anon_mb everything else.',
  }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
