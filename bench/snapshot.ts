/**
 * `npm run bench -- snapshot [--titles N] [--countries N] [--data DIR] [--heap-mb N]`: builds the weekly release of a
 * synthetic catalog (default 250,000 titles, 4 countries) in a child process (peak RSS of the
 * build alone), then has DuckDB write the very same rows with ZSTD in this run, and prints one
 * JSON line: our build time (reading the read models, link tokens, Parquet and tar.gz) and
 * Parquet bytes beside DuckDB's write time and bytes, with the ratios. Not a test: nothing
 * here gates CI on absolute times.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { extractTarGz } from '../services/snapshot/tarball.ts';
import { writeSyntheticCatalog } from './_snapshotCatalog.ts';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const titles = flag('titles', 250_000);
const countries = flag('countries', 4);
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'marquee-bench-snapshot-'));
const WEEK = '2026-W47';
// `--data <dir>` keeps the generated catalog there and reuses it on the next run (generating
// 250,000 titles takes minutes); the titles/countries flags must match the first run.
const dataFlag = process.argv.indexOf('--data');
const dataDir = dataFlag >= 0 && process.argv[dataFlag + 1] ? process.argv[dataFlag + 1] as string : join(dir, 'data');

try {
  let links = 0;
  if (!existsSync(join(dataDir, 'generated'))) {
    const readStore = lmdbReadStore({ dataDir });
    const generated = await writeSyntheticCatalog(readStore, {
      titles,
      countries,
      onProgress: (done, total) => {
        if (done % 50_000 === 0 || done === total) process.stderr.write(`catalog ${done}/${total}\n`);
      },
    });
    links = generated.links;
    await readStore.close();
    writeFileSync(join(dataDir, 'generated'), JSON.stringify(generated.links));
  } else {
    links = Number(readFileSync(join(dataDir, 'generated'), 'utf8'));
  }

  // The build's live heap is small (bounded batches); without a cap V8 lets the garbage of
  // decoding a million read-model documents pile up to ~700 MB before collecting it.
  const heapCap = `--max-old-space-size=${flag('heap-mb', 384)}`;
  const out = execFileSync(process.execPath, [heapCap, '--import', 'tsx', join(here, '_snapshotBuild.ts'), dataDir, join(dir, 'releases'), WEEK], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const ours = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as {
    build_ms: number; peak_rss_mb: number; peak_rss_anon_mb: number; peak_rss_file_mb: number; peak_wasm_mb: number; peak_heap_mb: number;
    files: number; total_bytes: number;
  };

  // Every Parquet file of the release, the bundle's extracted.
  const release = join(dir, 'releases', WEEK);
  await extractTarGz(join(release, 'metadata.tar.gz'), join(dir, 'metadata'));
  const parquetFiles: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.parquet')) parquetFiles.push(p);
    }
  };
  walk(release);
  walk(join(dir, 'metadata'));

  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;
  let oursParquetBytes = 0;
  let duckBytes = 0;
  let duckMs = 0;
  let rows = 0;
  for (const [i, file] of parquetFiles.entries()) {
    oursParquetBytes += statSync(file).size;
    await duck.run(`CREATE OR REPLACE TABLE t AS SELECT * FROM read_parquet(${lit(file)}, hive_partitioning = false)`);
    const target = join(dir, `duck-${i}.parquet`);
    const started = performance.now();
    await duck.run(`COPY t TO ${lit(target)} (FORMAT parquet, COMPRESSION zstd)`);
    duckMs += performance.now() - started;
    duckBytes += statSync(target).size;
    const counted = await duck.runAndReadAll('SELECT count(*)::BIGINT AS n FROM t');
    rows += Number(counted.getRowObjectsJson()[0]?.n ?? 0);
  }
  duck.closeSync();
  instance.closeSync();

  console.log(JSON.stringify({
    bench: 'snapshot',
    titles,
    countries,
    links,
    rows,
    parquet_files: parquetFiles.length,
    ours: {
      build_ms: ours.build_ms,
      peak_rss_mb: ours.peak_rss_mb,
      // Anonymous memory (JS heap, wasm, buffers) vs pages of LMDB's memory map, which the
      // kernel reclaims under pressure; sampled every 100 ms.
      peak_rss_anon_mb: ours.peak_rss_anon_mb,
      peak_rss_file_mb: ours.peak_rss_file_mb,
      peak_wasm_mb: ours.peak_wasm_mb,
      peak_heap_mb: ours.peak_heap_mb,
      release_bytes: ours.total_bytes,
      parquet_bytes: oursParquetBytes,
    },
    duckdb: { write_ms: Math.round(duckMs), parquet_bytes: duckBytes },
    ratios: {
      size_ours_over_duckdb: Number((oursParquetBytes / duckBytes).toFixed(3)),
      time_ours_build_over_duckdb_write: Number((ours.build_ms / duckMs).toFixed(2)),
    },
    note: 'ours.build_ms covers reading the read models, link-token encryption, Parquet writing and the tar.gz; duckdb.write_ms only writes the same rows from an in-memory table.',
  }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
