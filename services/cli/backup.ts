/**
 * `marquee backup --out DIR`: a copy of what the data directory holds, taken while Marquee runs,
 * that `DATA_DIR=DIR` starts from as it stood: the LMDB environment (event log, read models,
 * API keys, webhooks, the local inbox: whichever of them are embedded) as of one commit, the
 * published releases, and the development download-signing key when there is one.
 *
 * Parts on servers are not in it; the command names them and how each is backed up. The one
 * part that cannot be rebuilt is the event log: read models and the search index are
 * projections of it (`marquee replay`), releases are rebuilt from it byte for byte.
 */
import { copyFileSync, cpSync, existsSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { parseArgs } from 'node:util';
import { AppError } from '../../contracts/errors.ts';
import { backupLmdb } from '../../infra/lmdb/backup.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import type { Config } from '../shared/config.ts';
import { ensureDirectory } from '../shared/dataDir.ts';
import { progress } from './progress.ts';

interface BackupContext {
  args: string[];
  config: Config;
  parse: typeof parseArgs;
}

/** A usage mistake: one line, exit 1, nothing written. */
const usage = (why: string): AppError => new AppError('invalid_parameter', why);

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export async function backupCommand(ctx: BackupContext): Promise<number> {
  const { values } = ctx.parse({ args: ctx.args, options: { out: { type: 'string' } } });
  if (!values.out) throw usage('backup needs --out DIR, a new or empty directory');
  const { config } = ctx;
  const dataDir = resolve(config.dataDir);
  const out = resolve(values.out);
  // Compared with symbolic links resolved: a link into DATA_DIR is inside it too.
  const [realData, realOut] = [realPathOf(dataDir), realPathOf(out)];
  if (realOut === realData || realOut.startsWith(realData + sep)) throw usage(`--out ${out} is inside DATA_DIR ${dataDir}: a backup goes elsewhere`);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0)) {
    throw usage(`--out ${out} is not an empty directory: a backup never writes over files`);
  }

  // What the LMDB environment holds, and what lives on servers with how each is kept.
  const embedded: string[] = [];
  const onServers: string[] = [];
  if (config.eventStore === 'lmdb') embedded.push('the event log');
  else if (config.eventStore === 'kafka') onServers.push('the event log (Kafka: its topic, replicated by the brokers)');
  else onServers.push('the event log (EventStoreDB: its own backup)');
  if (config.mongodbUrl) onServers.push('read models, API keys and webhooks (MongoDB: mongodump; read models can also be rebuilt with `marquee replay`)');
  else embedded.push('read models, API keys and webhooks');
  if (!config.kafkaBrokers) embedded.push('the local inbox');
  if (config.releasesS3) onServers.push('releases (the S3 bucket; they can also be rebuilt from the event log with `marquee snapshot build --week`)');
  if (embedded.length === 0) {
    console.error(`marquee: backup: nothing is kept in ${dataDir}; every part is on a server:\n${onServers.map((p) => `  ${p}`).join('\n')}`);
    return 1;
  }

  // main.ts refused a DATA_DIR without lmdb/ before this (dataDirParts): here it holds data.

  // Written beside --out and renamed to it once whole and read back: a copy that failed (a full
  // disk) or was killed is never found at --out to be taken for a backup.
  const staging = `${out}.partial-${process.pid}`;
  try {
    // Made here one level at a time: the copy's own recursive mkdir spun for ever under /proc.
    ensureDirectory(join(staging, 'lmdb'), '--out', out);
    const report = await copyAll(config, dataDir, staging, embedded, out);
    if (existsSync(out)) rmdirSync(out);
    renameSync(staging, out);
    console.log(report);
    if (onServers.length > 0) console.log(`not in it, on their servers:\n${onServers.map((p) => `  ${p}`).join('\n')}`);
    console.log(`to restore: stop every Marquee process on ${dataDir}, then put ${out} in its place (or start with DATA_DIR=${out})`);
    return 0;
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

/** Copies everything into `out`, to be renamed `shownAs`; resolves to the report's first lines. */
async function copyAll(config: Config, dataDir: string, out: string, embedded: string[], shownAs: string): Promise<string> {
  const started = Date.now();
  const bar = progress('backup', 0, 'MB');
  const lmdb = await backupLmdb(dataDir, out, (written, used) => bar.update(Math.round(written / 1e6), Math.round(used / 1e6)))
    .then((copy) => {
      // The copy leaves out free pages, so it ends below the used size it was measured against.
      bar.update(Math.round(copy.bytes / 1e6), Math.round(copy.bytes / 1e6));
      return copy;
    })
    .finally(() => bar.stop());

  const copied: string[] = [`LMDB ${mb(lmdb.bytes)} (${embedded.join(', ')})`];
  if (!config.releasesS3) {
    const releases = await copyReleases(join(dataDir, 'releases'), join(out, 'releases'));
    if (releases.count > 0) copied.push(`${releases.count} release(s), ${mb(releases.bytes)}`);
    for (const gone of releases.skipped) console.error(`marquee: backup: release ${gone} was pruned while it was copied; left out`);
  }
  const signingKey = join(dataDir, 'download-signing.key');
  if (existsSync(signingKey)) {
    copyFileSync(signingKey, join(out, 'download-signing.key'));
    copied.push('the development download-signing key');
  }

  // Read back from the copy: it opens, and its log's head reads.
  let head = '';
  if (config.eventStore === 'lmdb') {
    const events = lmdbEventStore({ dataDir: out });
    try {
      head = `, its event log up to position ${await events.headPosition()}`;
    } finally {
      await events.close();
    }
  }
  return [`backup of ${dataDir} written to ${shownAs} in ${((Date.now() - started) / 1000).toFixed(1)} s${head}:`, ...copied.map((part) => `  ${part}`)].join('\n');
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended. */
function realPathOf(path: string): string {
  let head = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      rest.unshift(basename(head));
      head = parent;
    }
  }
}

/**
 * Copies each published release, as the release store lists them (never one being staged),
 * counting the bytes of its manifest's files.
 */
async function copyReleases(from: string, to: string): Promise<{ count: number; bytes: number; skipped: string[] }> {
  const result = { count: 0, bytes: 0, skipped: [] as string[] };
  for (const manifest of await fsReleaseStore({ dir: from }).list()) {
    const { version } = manifest;
    try {
      cpSync(join(from, version), join(to, version), { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true });
    } catch (err) {
      // Pruning renames a release away and deletes it: one that went meanwhile is left out.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        result.skipped.push(version);
        continue;
      }
      throw new AppError('unavailable', `copying release ${version} to ${to} failed: ${(err as Error).message}`, { cause: err, retriable: false });
    }
    result.count += 1;
    result.bytes += manifest.files.reduce((sum, f) => sum + f.sizeBytes, 0);
  }
  return result;
}
