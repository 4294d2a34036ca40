/**
 * The one-shot CLI commands. Each opens the adapters it needs, does its work with progress a
 * person can follow, and closes them again.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { parseArgs } from 'node:util';
import type { EventType } from '../../contracts/events.ts';
import { isCountryCode, isIsoDate } from '../../contracts/ids.ts';
import type { ApiKeyStore, Clock } from '../../contracts/ports.ts';
import { ALL_PROJECTIONS, projectionByName } from '../../projections/index.ts';
import { dropParked, listParked, retryParked, type ParkedDocument } from '../../projections/parking.ts';
import { catchUp } from '../../projections/runner.ts';
import { createApiKey, listApiKeys, moveLegacyApiKeys, revokeApiKey } from '../api/keys.ts';
import { crawlDate } from '../crawler/catalog.ts';
import { crawl } from '../crawler/crawl.ts';
import { lmdbUnmapGroup } from '../../infra/lmdb/unmapGroup.ts';
import { createLinkTokens, linkKeysFromEnv } from '../links/linkTokens.ts';
import { rankDay, rankingDate } from '../ranking/job.ts';
import { releaseWeek } from '../snapshot/week.ts';
import { openAdapters, openApiKeyStore, openReadStore, openReleaseStore, type Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { DataDirPart } from '../shared/dataDir.ts';
import { describeHealthReports, HEALTH_COLLECTION, type HealthReport } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { liveCollection, resolveCollection } from '../shared/readModels.ts';
import { describeLease, LeaseKeeper, PROJECTOR_LEASE, SCHEDULER_LEASE } from '../shared/lease.ts';
import { catchUpWhileHeld, createPipeline, ingestSettings } from './pipeline.ts';
import { progress } from './progress.ts';
import { sampleStartDate } from './sample.ts';
import { awaitProjections } from './schedule.ts';
import { backupCommand } from './backup.ts';
import { onlyPositionals, UsageError } from './args.ts';
import { webhooksCommand } from './webhooks.ts';
import { loadProjectionModule, replayToFile } from './analystReplay.ts';

export interface CommandContext {
  args: string[];
  config: Config;
  logger: Logger;
  clock: Clock;
  parse: typeof parseArgs;
}


async function withAdapters<T>(ctx: CommandContext, work: (adapters: Adapters) => Promise<T>): Promise<T> {
  const adapters = await openAdapters(ctx.config, ctx.logger);
  try {
    return await work(adapters);
  } finally {
    await adapters.close();
  }
}

/**
 * Brings the read models up to the head of the log before a command reads them. The projections
 * have one writer at a time, the holder of the projector lease: the command folds them itself
 * only when it can take the lease (no projector runs), and otherwise waits for the active
 * projector, which a second writer beside it would race document by document.
 */
async function projectionsUpToDate(adapters: Adapters, logger: Logger): Promise<void> {
  const lease = new LeaseKeeper(adapters.readStore, PROJECTOR_LEASE, `${hostname()}:${process.pid}:cli`, 10_000);
  if (!(await lease.take())) {
    await awaitProjections(adapters.eventStore, adapters.readStore, 600_000);
    return;
  }
  const renew = setInterval(() => void lease.take().catch(() => undefined), lease.ms / 4);
  try {
    // A catch-up whose lease lapsed (renewals late) ends with its guard's error: the process
    // that took the lease over folds the rest, and this command waits for it.
    const pipeline = createPipeline(adapters, logger, { guard: () => lease.check() });
    if (!(await catchUpWhileHeld(pipeline.projections, lease))) await awaitProjections(adapters.eventStore, adapters.readStore, 600_000);
  } finally {
    clearInterval(renew);
    await lease.release().catch(() => undefined);
  }
}

function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} takes a non-negative integer, got "${value}"`);
  return n;
}

/** Past it a crawl's date is past any the clock can reach (and past what Date holds, near 2.7e8). */
const MAX_CRAWL_DAY = 1_000_000;

async function crawlCommand(ctx: CommandContext): Promise<number> {
  const { values } = ctx.parse({
    args: ctx.args,
    options: {
      day: { type: 'string' },
      titles: { type: 'string' },
      seed: { type: 'string' },
      'start-date': { type: 'string' },
      countries: { type: 'string' },
      'publish-only': { type: 'boolean', default: false },
    },
  });
  const day = intOption(values.day, 'day', 0);
  const seed = intOption(values.seed, 'seed', ctx.config.sampleSeed);
  const titles = values.titles === undefined ? undefined : intOption(values.titles, 'titles', 0);
  const startDate = values['start-date'] ?? ctx.config.sampleStartDate ?? sampleStartDate(ctx.clock, ctx.config.sampleDays);
  if (!isIsoDate(startDate)) throw new UsageError(`--start-date takes YYYY-MM-DD, got "${startDate}"`);
  // `us,,de` was read as US, "" and DE, and refused as "does not cover country " (an empty name).
  const countries = values.countries?.split(',').map((c) => c.trim().toUpperCase());
  if (countries !== undefined && !countries.every(isCountryCode)) {
    throw new UsageError(`--countries takes two-letter country codes separated by commas, such as US,DE; got "${values.countries}"`);
  }
  // A day to come is refused here, not observation by observation: ingest dead-letters what is
  // dated ahead of its clock, and this said "ingested and projected" over nothing but dead letters.
  const date = day <= MAX_CRAWL_DAY ? crawlDate(day, startDate) : null;
  const today = ctx.clock.now().toISOString().slice(0, 10);
  if (date === null || date > today) {
    throw new UsageError(`the crawl of day ${day} from ${startDate}${date === null ? '' : ` (${date})`} is after today (${today}, UTC): a day is crawled once it has come`);
  }
  return withAdapters(ctx, async (adapters) => {
    const bar = progress(`crawl day ${day}`, 0, 'observations');
    const counts = await crawl({
      bus: adapters.bus,
      seed,
      day,
      startDate,
      ...(titles === undefined ? {} : { titles }),
      ...(countries === undefined ? {} : { countries }),
      onProgress: (n: number) => bar.update(n, n),
    });
    bar.stop();
    const published = Object.entries(counts as Record<string, number>);
    const total = published.reduce((sum, [, n]) => sum + n, 0);
    console.log(`published ${total.toLocaleString('en-US')} observations: ${published.map(([type, n]) => `${n.toLocaleString('en-US')} ${type}`).join(', ')}`);
    if (values['publish-only']) return 0;
    const pipeline = createPipeline(adapters, ctx.logger, ingestSettings(ctx.config, ctx.clock));
    const projecting = progress('ingest and project', 0, 'events');
    await pipeline.drain((stage, done, total) => projecting.update(done, total, stage));
    projecting.stop();
    console.log(`crawl of ${date} ingested and projected; event store head ${await adapters.eventStore.headPosition()}`);
    return 0;
  });
}

async function rankCommand(ctx: CommandContext): Promise<number> {
  const { values } = ctx.parse({ args: ctx.args, options: { date: { type: 'string' } } });
  if (values.date !== undefined && !isIsoDate(values.date)) throw new UsageError(`--date takes YYYY-MM-DD, got "${values.date}"`);
  // Refused before the wait for the projections below, which can be long.
  const date = rankingDate(values.date, ctx.clock);
  return withAdapters(ctx, async (adapters) => {
    // Rankings read the links and media read models: bring them up to date first, and fold
    // the ranking's own events before answering.
    await projectionsUpToDate(adapters, ctx.logger);
    const result = await rankDay({ date, readStore: adapters.readStore, eventStore: adapters.eventStore, clock: ctx.clock });
    await projectionsUpToDate(adapters, ctx.logger);
    const appended = result.filter((r) => r.status === 'appended');
    const existed = result.filter((r) => r.status === 'exists').map((r) => r.country);
    const already = existed.length > 0 ? `already ranked in ${existed.join(', ')} (a day is ranked once)` : '';
    const ranked = appended.length > 0 || existed.length === 0 ? `${appended.length} ${appended.length === 1 ? 'country' : 'countries'} ranked` : '';
    console.log(`ranking for ${date}: ${[ranked, already].filter(Boolean).join('; ')}`);
    for (const r of appended) console.log(`  ${r.country}  ${r.ranked} titles ranked, ${r.positionChanges} position changes`);
    return 0;
  });
}

async function replayCommand(ctx: CommandContext): Promise<number> {
  const { values, positionals } = ctx.parse({
    args: ctx.args,
    allowPositionals: true,
    options: { module: { type: 'string' }, out: { type: 'string' }, 'keep-old': { type: 'boolean', default: false } },
  });
  // One projection a run: `replay media links` rebuilt media alone and said nothing of links.
  if (positionals.length > (values.module ? 0 : 1)) {
    throw new UsageError(`replay takes one projection${values.module ? ' or --module, not both' : ''}; got ${positionals.join(' ')}`);
  }
  if (values.module) {
    if (!values.out) throw new UsageError('replay --module needs --out FILE.ndjson');
    const projection = await loadProjectionModule(values.module);
    return withAdapters(ctx, (adapters) => replayToFile(adapters, projection, resolve(values.out as string)));
  }
  const name = positionals[0];
  const projection = name === undefined ? undefined : projectionByName(name);
  if (!projection) {
    throw new UsageError(`replay needs a projection: one of ${ALL_PROJECTIONS.map((p) => p.name).join(', ')} (or --module FILE --out FILE)`);
  }
  return withAdapters(ctx, async (adapters) => {
    const { readStore, eventStore } = adapters;
    // A new physical collection beside the live one; the API keeps answering from the old one
    // until the switch.
    const collection = `${projection.name}_v${projection.version}_r${Date.now().toString(36)}`;
    const bar = progress(`replay ${projection.name}`, await eventStore.headPosition(), 'events');
    let result = await catchUp({ projection, eventStore, readStore, collection, batchSize: 5000, onProgress: (p, h) => bar.update(p, h) });
    // Events appended during the rebuild (a live server): one more pass before switching.
    result = await catchUp({ projection, eventStore, readStore, collection, batchSize: 5000, onProgress: (p, h) => bar.update(p, h) });
    bar.stop();
    // What this switch replaces, answered by the switch itself: a replay of the same projection
    // that switched meanwhile made its own collection live, and that one is the copy to drop.
    // Read before the switch (at the start, or even just before it), two replays switching at
    // once both read the same old collection and one new copy stayed behind, named by no alias.
    const previous = liveCollection(await readStore.setAlias(projection.name, collection), projection);
    const documents = await readStore.count(collection);
    console.log(`${projection.name}: rebuilt ${documents} documents up to position ${result.position} into ${collection}; now live`);
    if (previous !== collection && !values['keep-old']) {
      // A running server follows the alias within a couple of seconds; give in-flight reads time.
      await new Promise((r) => setTimeout(r, ctx.config.replayDropGraceMs));
      await readStore.dropCollection(previous);
      // Its parked events were rebuilt into the new collection (parked there again if they still fail).
      await dropParked(readStore, previous);
      console.log(`dropped the previous collection ${previous}`);
    }
    return 0;
  });
}

async function statusCommand(ctx: CommandContext): Promise<number> {
  onlyPositionals(ctx.parse, ctx.args, 0, 'status takes no arguments');
  return withAdapters(ctx, async (adapters) => {
    const { readStore, eventStore } = adapters;
    const head = await eventStore.headPosition();
    console.log(`engines: ${Object.entries(adapters.engines).map(([k, v]) => `${k}=${v}`).join('; ')}\n`);
    console.log('processes:');
    const reports = await readStore.scan<HealthReport>(HEALTH_COLLECTION);
    for (const line of describeHealthReports(reports.map((r) => r.doc), ctx.clock.now())) console.log(`  ${line}`);
    // The active projector and scheduler: the holders of their leases (the others stand by).
    console.log('\nleases:');
    for (const name of [PROJECTOR_LEASE, SCHEDULER_LEASE]) console.log(`  ${await describeLease(readStore, name, ctx.clock.now().getTime())}`);
    console.log('');
    console.log(`event store head position: ${head}\n`);
    // Read first, printed after: the columns are as wide as their longest name (availability_history, a replay's collection).
    const rows: string[][] = [['projection', 'collection', 'position', 'lag', 'documents']];
    for (const projection of ALL_PROJECTIONS) {
      const collection = await resolveCollection(readStore, projection);
      const position = await readStore.getCheckpoint(collection);
      const documents = await readStore.count(collection);
      rows.push([projection.name, collection, String(position), String(head - position), String(documents)]);
    }
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
    for (const row of rows) console.log(row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
    const counts = new Map<EventType, number>();
    let after = 0;
    // Counting reads the whole log (about 3 s a million events on LMDB): a long one shows progress.
    const bar = head > 1_000_000 ? progress('events per type', head, 'positions') : null;
    for (;;) {
      const batch = await eventStore.readAll({ after, limit: 10_000 });
      for (const e of batch) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
      const last = batch[batch.length - 1];
      if (!last) break;
      after = last.position;
      bar?.update(after);
    }
    bar?.stop();
    console.log(`\nevents per type:${counts.size === 0 ? ' none yet' : ''}`);
    for (const [type, n] of [...counts.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${type.padEnd(26)} ${n}`);
    if (adapters.localInbox) {
      const kept = adapters.localInbox.retained();
      const since = kept.oldestPublishedAt === null ? '' : `, the oldest published ${kept.oldestPublishedAt}`;
      const span = kept.records === 0 ? '' : ` (sequences ${kept.firstSequence}-${kept.lastSequence}${since})`;
      console.log(`\nlocal inbox: ${kept.records} observations kept${span}; handled ones go after ${kept.retentionMs / 3_600_000} h (INBOX_RETENTION_HOURS)`);
    }
    console.log(`${adapters.localInbox ? '' : '\n'}dead letters: ${await adapters.bus.countDeadLetters()}`);
    await printParkedStatus(adapters, head);
    return 0;
  });
}

/**
 * The `marquee status` section on what the projections could not write, and how far the search
 * index feed is (a durable feed only: an in-process index is fed by the process serving it).
 */
async function printParkedStatus(adapters: Adapters, head: number): Promise<void> {
  const { readStore } = adapters;
  if (adapters.searchFeedCheckpoint !== null) {
    const fed = await readStore.getCheckpoint(adapters.searchFeedCheckpoint);
    console.log(`\nsearch index feed: position ${fed}, lag ${head - fed}`);
  }
  const records = await listParked(readStore);
  if (records.length === 0) {
    console.log('\nparked events: none');
    return;
  }
  console.log('\nparked events (writes that kept failing; `marquee parked list`, then `marquee parked retry`):');
  for (const [checkpoint, group] of groupByCheckpoint(records.map((r) => r.doc))) {
    const events = group.reduce((sum, d) => sum + d.events.length, 0);
    const first = group[0] as ParkedDocument;
    const projection = projectionByName(first.projection);
    const live = projection !== undefined && (await resolveCollection(readStore, projection)) === first.collection;
    console.log(`  ${first.projection.padEnd(12)} ${checkpoint.padEnd(26)} ${String(events).padStart(6)} events in ${group.length} documents${live ? '' : ' (not the live collection)'}`);
  }
}

function groupByCheckpoint(docs: ParkedDocument[]): Map<string, ParkedDocument[]> {
  const groups = new Map<string, ParkedDocument[]>();
  for (const doc of docs) {
    const list = groups.get(doc.checkpoint);
    if (list) list.push(doc);
    else groups.set(doc.checkpoint, [doc]);
  }
  return groups;
}

/** A document id as a person can read it in one line (ids may be what was too long to write). */
function shortId(id: string): string {
  return id.length <= 60 ? id : `${id.slice(0, 60)}… (${id.length} characters)`;
}

/**
 * `marquee parked list|retry [--projection P] [POSITION]`: what the projections parked, and
 * re-applying it once the cause is fixed. Retry folds each document's parked events in order and
 * removes the record when the write succeeds (retrying again is harmless: events already in the
 * stored document are skipped). Exits 1 when a retried document still fails.
 */
export async function parkedCommand(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.args;
  const usage = 'parked list [--projection P] | parked retry [--projection P] [POSITION]';
  if (sub !== 'list' && sub !== 'retry') throw new UsageError(usage);
  const { values, positionals } = ctx.parse({ args: rest, allowPositionals: true, options: { projection: { type: 'string' } } });
  const only = values.projection;
  if (only !== undefined && !projectionByName(only)) {
    throw new UsageError(`--projection takes one of ${ALL_PROJECTIONS.map((p) => p.name).join(', ')}, got "${only}"`);
  }
  if (positionals.length > 1 || (sub === 'list' && positionals.length > 0)) throw new UsageError(usage);
  const position = positionals[0] === undefined ? undefined : Number(positionals[0]);
  if (position !== undefined && !(Number.isInteger(position) && position > 0)) {
    throw new UsageError(`POSITION is an event position (a positive integer), got "${positionals[0]}"`);
  }
  return withAdapters(ctx, async ({ readStore, eventStore }) => {
    const records = (await listParked(readStore))
      .map((r) => r.doc)
      .filter((d) => only === undefined || d.projection === only)
      .filter((d) => position === undefined || d.events.some((e) => e.position === position));
    if (records.length === 0) {
      console.log(position === undefined ? 'no parked events' : `no parked event at position ${position}`);
      return position === undefined ? 0 : 1;
    }
    if (sub === 'list') {
      for (const [checkpoint, group] of groupByCheckpoint(records)) {
        console.log(`${(group[0] as ParkedDocument).projection} (${checkpoint}):`);
        for (const doc of group) {
          for (const e of doc.events) {
            console.log(`  position ${e.position}  ${e.type}  document ${shortId(doc.documentId)}  attempts ${e.attempts}  ${e.at}`);
            console.log(`    ${e.reason}`);
          }
        }
      }
      return 0;
    }
    let failed = 0;
    for (const [checkpoint, group] of groupByCheckpoint(records)) {
      const first = group[0] as ParkedDocument;
      const projection = projectionByName(first.projection);
      if (!projection || (await resolveCollection(readStore, projection)) !== first.collection) {
        console.log(`${first.projection} (${checkpoint}): skipped, not the live collection of a read model (drop it with \`marquee replay\`)`);
        continue;
      }
      const outcomes = await retryParked({ projection, eventStore, readStore, checkpoint, ...(position === undefined ? {} : { position }) });
      for (const o of outcomes) {
        const where = `${first.projection} document ${shortId(o.documentId)} (positions ${o.positions.join(', ')})`;
        if (o.ok) console.log(`${where}: applied, no longer parked`);
        else {
          failed += 1;
          console.log(`${where}: still fails: ${o.reason}`);
        }
      }
    }
    return failed > 0 ? 1 : 0;
  });
}

async function deadLettersCommand(ctx: CommandContext): Promise<number> {
  const { values } = ctx.parse({ args: ctx.args, options: { limit: { type: 'string' } } });
  const limit = intOption(values.limit, 'limit', 50);
  return withAdapters(ctx, async (adapters) => {
    const letters = await adapters.bus.listDeadLetters({ limit });
    if (letters.length === 0) console.log('no dead letters');
    for (const letter of letters) {
      console.log(`${letter.at}  ${letter.source}  ${letter.reason}`);
      console.log(`  ${JSON.stringify(letter.payload).slice(0, 300)}`);
    }
    return 0;
  });
}

async function keysCommand(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.args;
  return withAdapters(ctx, async ({ readStore }) => {
    const { apiKeys } = await openApiKeyStore(ctx.config);
    try {
      // Keys created before the key store existed are in the read models: moved on first use.
      await moveLegacyApiKeys(readStore, apiKeys);
      return await keysSubcommand(sub, rest, apiKeys, ctx);
    } finally {
      await apiKeys.close();
    }
  });
}

async function keysSubcommand(sub: string | undefined, rest: string[], apiKeys: ApiKeyStore, ctx: CommandContext): Promise<number> {
  if (sub === 'create') {
    const { values } = ctx.parse({ args: rest, options: { name: { type: 'string' } } });
    if (!values.name) throw new UsageError('keys create needs --name NAME');
    const { key, doc } = await createApiKey(apiKeys, values.name, ctx.clock);
    console.log(`created key "${doc.name}" (${doc.prefix}…); it is shown only this once:`);
    console.log(key);
    return 0;
  }
  if (sub === 'revoke') {
    const [target] = onlyPositionals(ctx.parse, rest, 1, 'keys revoke needs the key or its prefix, and nothing else') as [string];
    const revoked = await revokeApiKey(apiKeys, target, ctx.clock);
    if (revoked.alreadyRevoked) {
      console.log(`key "${revoked.name}" (${revoked.prefix}…) was already revoked, at ${revoked.revokedAt}; nothing changed`);
    } else {
      console.log(`revoked key "${revoked.name}" (${revoked.prefix}…)`);
    }
    return 0;
  }
  if (sub === 'list') {
    onlyPositionals(ctx.parse, rest, 0, 'keys list takes no arguments');
    const keys = await listApiKeys(apiKeys);
    if (keys.length === 0) console.log('no keys yet: marquee keys create --name NAME');
    // The names' column as wide as the longest (up to 100 characters), so the dates line up.
    const width = Math.max(20, ...keys.map((k) => k.name.length));
    for (const k of keys) {
      console.log(
        `${k.prefix}…  ${k.name.padEnd(width)} created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}${k.revokedAt ? `  revoked ${k.revokedAt}` : ''}`,
      );
    }
    return 0;
  }
  throw new UsageError('keys create --name NAME | keys revoke KEY | keys list');
}

async function snapshotCommand(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.args;
  if (sub !== 'build') throw new UsageError('snapshot build [--week YYYY-Www] [--sample]');
  const { values } = ctx.parse({ args: rest, options: { week: { type: 'string' }, sample: { type: 'boolean', default: false } } });
  // Refused before the wait for the projections below, which can be long.
  if (values.week !== undefined) releaseWeek(values.week, ctx.clock);
  // The same rule as `start`: the development link key only with --sample (a release's tokens
  // must be the ones the serving API decodes).
  const keys = linkKeysFromEnv({ LINK_TOKEN_KEYS: ctx.config.linkTokenKeys ?? undefined }, { development: values.sample });
  // The release reads the read models: bring them up to date first.
  await withAdapters(ctx, (adapters) => projectionsUpToDate(adapters, ctx.logger));
  // Then read them through a store of the build's own, once the adapters are closed: on LMDB
  // it is then the only handle on the file, so unmapping it drops the pages the build has read
  // from this process's resident memory (see BUILD_UNMAP_AFTER_MB).
  // On LMDB the files are built on threads with stores of their own (MongoDB: on this thread),
  // which drop their map of the file together with this one (unmapGroup.ts).
  // Imported here, not with the CLI: `start` loads this module too and needs no build.
  const { BUILD_UNMAP_AFTER_MB, buildRelease } = await import('../snapshot/build.ts');
  const unmapGroup = lmdbUnmapGroup();
  const lmdb = { unmapAfterMb: BUILD_UNMAP_AFTER_MB, unmapGroup };
  const { readStore } = await openReadStore(ctx.config, lmdb);
  try {
    const { releases, close: closeReleases } = await openReleaseStore(ctx.config);
    const linkTokens = createLinkTokens({ keys });
    let bar: ReturnType<typeof progress> | null = null;
    const result = await buildRelease({
      readStore,
      releases,
      linkTokens,
      clock: ctx.clock,
      keep: ctx.config.releasesKeep,
      ...(values.week === undefined ? {} : { week: values.week }),
      ...(ctx.config.mongodbUrl ? {} : { threads: { lmdb: { ...lmdb, dataDir: ctx.config.dataDir }, linkKeys: { keys } } }),
      onProgress: (p) => {
        bar ??= progress('snapshot build', p.total, 'files');
        bar.update(p.done, p.total, p.file);
      },
    }).finally(closeReleases);
    (bar as ReturnType<typeof progress> | null)?.stop();
    const m = result.manifest;
    if (!result.created) {
      console.log(`release ${m.version} is already published (releases are immutable); nothing to do`);
      return 0;
    }
    const bytes = m.files.reduce((sum, f) => sum + f.sizeBytes, 0);
    console.log(
      `release ${m.version} published: ${m.files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${m.countries.length} ${m.countries.length === 1 ? 'country' : 'countries'}, in ${(result.durationMs / 1000).toFixed(1)} s` +
        (result.pruned.length > 0 ? `; pruned ${result.pruned.join(', ')}` : ''),
    );
    return 0;
  } finally {
    await readStore.close();
  }
}

/**
 * What each command reads or manages in DATA_DIR: where the configuration keeps one of them
 * there, main.ts refuses a DATA_DIR that holds no data yet (requireDataDir) instead of making
 * it empty. `crawl` writes, and makes it as `start` does.
 */
export const dataDirParts: Record<string, readonly DataDirPart[]> = {
  crawl: [],
  rank: ['events', 'readModels'],
  replay: ['events', 'readModels'],
  status: ['events', 'observations', 'readModels'],
  'dead-letters': ['observations'],
  parked: ['readModels'],
  keys: ['apiKeys'],
  snapshot: ['events', 'readModels'],
  webhooks: ['readModels'],
  backup: ['events', 'observations', 'readModels', 'apiKeys'],
};

export const commands: Record<string, (ctx: CommandContext) => Promise<number>> = {
  crawl: crawlCommand,
  rank: rankCommand,
  replay: replayCommand,
  status: statusCommand,
  'dead-letters': deadLettersCommand,
  parked: parkedCommand,
  keys: keysCommand,
  snapshot: snapshotCommand,
  webhooks: (ctx) => webhooksCommand(ctx),
  backup: (ctx) => backupCommand(ctx),
};
