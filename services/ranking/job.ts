/**
 * The daily ranking job: per country, score every title available there (formula.ts), compare
 * with the previous day's chart and append to `ranking-{country}` the day's chart as
 * RankingComputed parts plus one PositionChanged per title that moved, entered or left the
 * chart (chartEvents.ts: a large chart takes several appends, its last part closing the day).
 * The trending read model is built from those events alone, so ranking history replays like
 * everything else.
 *
 * It reads the `ranking_inputs` and `providers` read models, so run it after the projections
 * have caught up with the day's crawl, and of its own stream only the end (history.ts).
 * Re-running a day that a country already has complete is a no-op; a day a crash left
 * unfinished is ranked again from its first part. Countries are ranked one after another, and
 * the days that fit one append are appended together (PendingDays): the log is the one
 * country-by-country appends write, event for event and position for position.
 */
import type { RankingEntry } from '../../contracts/domain.ts';
import { AppError, isAppError } from '../../contracts/errors.ts';
import { isCountryCode, isIsoDate, streams } from '../../contracts/ids.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import type { Clock, EventStore, ExpectedRevision, ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import type { ProvidersDoc, RankingFacts, RankingFactsBlock, RankingOffersBlock } from '../../contracts/readModels.ts';
import { providersProjection } from '../../projections/providers.ts';
import { rankingFactsKey, rankingInputsProjection, rankingOffersPrefix, unpackRankingOffer } from '../../projections/rankingInputs.ts';
import { resolveCollection } from '../shared/readModels.ts';
import { dayEvents, MAX_APPEND_BYTES, packAppends, PART_ENTRIES } from './chartEvents.ts';
import { diffCharts } from './diff.ts';
import { FORMULA_VERSION, rankTitles, type RankingCandidate } from './formula.ts';
import { readRankingHistory } from './history.ts';

export interface RankDayOptions {
  /** The day to rank, `YYYY-MM-DD`. Default: the clock's current UTC date. */
  date?: string;
  /** Upper-case countries to rank. Default: every country of the providers read model. */
  countries?: string[];
  readStore: ReadStore;
  eventStore: EventStore;
  clock: Clock;
  /** How many top positions form the chart that PositionChanged events describe. Default 200. */
  chartSize?: number;
  /** Documents read per scan page / getMany call. Default 500. */
  pageSize?: number;
  /** Appends tried again after a concurrent writer moved the stream. Default 3. */
  maxAttempts?: number;
  /** Positions per RankingComputed part. Default PART_ENTRIES (1,000). */
  partSize?: number;
  /** Most bytes of events per append (EventStoreDB refuses over its MaxAppendSize). Default MAX_APPEND_BYTES (512 KiB). */
  maxAppendBytes?: number;
  /** Chart entries of single-append days held back before they are appended together. Default 250,000. */
  flushEntries?: number;
  /** Aborting ranks no further country (the one in flight finishes): the result lists the ranked ones. */
  signal?: AbortSignal;
}

export interface CountryRanking {
  country: string;
  date: string;
  /** `appended`: this run appended the day; `exists`: the stream already had it (no-op). */
  status: 'appended' | 'exists';
  /** Titles ranked (entries of the day's RankingComputed parts), 0 when `exists`. */
  ranked: number;
  /** PositionChanged events appended, 0 when `exists`. */
  positionChanges: number;
}

/**
 * Every read model the job reads: a caller that runs it right after a crawl (the sample load)
 * waits for these alone to fold the crawl (services/cli/projectionThread.ts). Kept beside the
 * reads below, so a new one is added in both places.
 */
export const RANKING_READS: ReadonlyArray<Projection<unknown>> = [rankingInputsProjection, providersProjection];

/**
 * The day a run ranks: `date`, or the clock's UTC day when none is given. Refuses a day that is
 * not a calendar day, or that has not come yet: a day is ranked from the catalog as it stands,
 * and its events stay in the log, so a day to come (a mistyped year) would be every country's
 * latest chart and trending day until then.
 */
export function rankingDate(date: string | undefined, clock: Clock): string {
  const today = clock.now().toISOString().slice(0, 10);
  const day = date ?? today;
  if (!isIsoDate(day)) {
    throw new AppError('invalid_parameter', `ranking date ${day} is not a YYYY-MM-DD calendar date`, { details: { parameter: 'date' } });
  }
  if (day > today) {
    throw new AppError('invalid_parameter', `ranking date ${day} is after today (${today}, UTC): a day is ranked once it has come`, {
      details: { parameter: 'date' },
    });
  }
  return day;
}

export async function rankDay(options: RankDayOptions): Promise<CountryRanking[]> {
  const date = rankingDate(options.date, options.clock);
  const chartSize = options.chartSize ?? 200;
  if (!Number.isInteger(chartSize) || chartSize < 1) {
    throw new AppError('invalid_parameter', `chart size ${chartSize} is not a positive integer`, { details: { parameter: 'chartSize' } });
  }
  const { readStore } = options;
  const collections = {
    inputs: await resolveCollection(readStore, rankingInputsProjection),
    providers: await resolveCollection(readStore, providersProjection),
  };
  const countries = options.countries ?? (await readStore.scan<ProvidersDoc>(collections.providers)).map((d) => d.key);
  const invalid = countries.find((raw) => !isCountryCode(raw));
  if (invalid !== undefined) {
    throw new AppError('invalid_parameter', `country ${invalid} is not a two-letter code`, { details: { parameter: 'countries' } });
  }
  // A title is ranked in many countries: read its facts once per run, not once per country.
  const facts = new Map<string, Map<string, RankingFacts>>();
  const results: CountryRanking[] = [];
  const pending = new PendingDays(options.eventStore, options.flushEntries ?? FLUSH_ENTRIES);
  // One country at a time: ranking four at once on FerretDB made the first day's ranking slower
  // (243 s against 154 s at load 9) and starved the server's health checks.
  for (const raw of countries) {
    if (options.signal?.aborted === true) break;
    const job: CountryJob = { ...options, country: raw.toUpperCase(), date, chartSize, collections, facts };
    const day = await prepareCountry(job);
    if (day.kind === 'exists') {
      results.push(day.result);
    } else if (day.appends.length === 1) {
      const slot = results.push(day.result) - 1;
      await pending.add(day, job, (result) => (results[slot] = result));
    } else {
      // A day of several appends is appended alone, in order, after what is pending: the log
      // then holds every event at the position the country-by-country appends gave it.
      await pending.flush();
      results.push(await commitCountry(job, day));
    }
  }
  await pending.flush();
  return results;
}

/**
 * Chart entries held back at most before the pending days are appended (about 120 bytes of
 * JSON each): all 50 countries of the sample, while a 250,000-title country goes alone.
 */
const FLUSH_ENTRIES = 250_000;

/**
 * Single-append days of several countries, appended in one `appendMany`: one durable write
 * (on LMDB one fsync) instead of one per country. The 50 fsyncs of a day were most of the
 * sample's ranking time: 0.9 s of a day's 1.4 s, against 0.5 s of CPU. Each request is
 * checked on its own, so a conflict in one country ranks that one again as before.
 */
class PendingDays {
  private days: Array<{ day: NewDay; job: CountryJob; settle: (result: CountryRanking) => void }> = [];
  private entries = 0;
  constructor(
    private readonly eventStore: EventStore,
    private readonly maxEntries: number,
  ) {}

  async add(day: NewDay, job: CountryJob, settle: (result: CountryRanking) => void): Promise<void> {
    this.days.push({ day, job, settle });
    this.entries += day.result.ranked;
    if (this.entries >= this.maxEntries) await this.flush();
  }

  async flush(): Promise<void> {
    const days = this.days;
    this.days = [];
    this.entries = 0;
    if (days.length === 0) return;
    const stream = (d: NewDay) => streams.ranking(d.result.country);
    const results = await this.eventStore.appendMany(
      days.map(({ day }) => ({ stream: stream(day), events: day.appends[0] as DomainEvent[], expectedRevision: day.expected })),
    );
    for (const [i, { job, settle }] of days.entries()) {
      const result = results[i];
      if (result === undefined) throw new AppError('internal', 'appendMany returned no result');
      if (!isAppError(result)) continue;
      // Another run appended meanwhile: rank the country again, as a lone append would have.
      if (isAppError(result, 'wrong_expected_revision') && (job.maxAttempts ?? 3) > 1) {
        settle(await rankCountry({ ...job, maxAttempts: (job.maxAttempts ?? 3) - 1 }));
        continue;
      }
      throw result;
    }
  }
}

interface CountryJob extends RankDayOptions {
  country: string;
  date: string;
  chartSize: number;
  collections: { inputs: string; providers: string };
  /** Facts blocks read so far in this run, by block. */
  facts: Map<string, Map<string, RankingFacts>>;
}

/** A country's day ready to append, or already in its stream. */
type PreparedDay = { kind: 'exists'; result: CountryRanking } | NewDay;
interface NewDay {
  kind: 'new';
  result: CountryRanking;
  appends: DomainEvent[][];
  expected: ExpectedRevision;
}

/** Reads the end of the country's stream and, unless it holds the day, computes the day's appends. */
async function prepareCountry(job: CountryJob): Promise<PreparedDay> {
  const stream = streams.ranking(job.country);
  const history = await readRankingHistory(job.eventStore, stream, job.date, job.chartSize);
  if (history.exists) {
    return { kind: 'exists', result: { country: job.country, date: job.date, status: 'exists', ranked: 0, positionChanges: 0 } };
  }
  const entries = await computeEntries(job);
  const changes = diffCharts(history.previous?.entries ?? null, entries, job.chartSize);
  const latestDate = history.latest !== null && history.latest > job.date ? history.latest : job.date;
  const events = dayEvents(
    { country: job.country, date: job.date, formulaVersion: FORMULA_VERSION, latestDate, entries, changes, metadata: { producer: 'ranking' } },
    job.partSize ?? PART_ENTRIES,
  );
  return {
    kind: 'new',
    result: { country: job.country, date: job.date, status: 'appended', ranked: entries.length, positionChanges: changes.length },
    appends: packAppends(events, job.maxAppendBytes ?? MAX_APPEND_BYTES),
    expected: history.revision === -1 ? 'no_stream' : history.revision,
  };
}

/** Appends a prepared day, each append under the revision the previous one left. */
async function commitCountry(job: CountryJob, day: NewDay): Promise<CountryRanking> {
  let expected = day.expected;
  for (const batch of day.appends) {
    expected = (await job.eventStore.append(streams.ranking(job.country), batch, expected)).nextExpectedRevision;
  }
  return day.result;
}

/** Ranks one country on its own, reading again when another run moved its stream meanwhile. */
async function rankCountry(job: CountryJob): Promise<CountryRanking> {
  const maxAttempts = job.maxAttempts ?? 3;
  for (let attempt = 1; ; attempt += 1) {
    const day = await prepareCountry(job);
    if (day.kind === 'exists') return day.result;
    try {
      return await commitCountry(job, day);
    } catch (err) {
      // Another run appended meanwhile: read again; it probably ranked this very day already
      // (parts this run appended before the conflict are an unfinished day, which nothing reads).
      if (isAppError(err, 'wrong_expected_revision') && attempt < maxAttempts) continue;
      throw err;
    }
  }
}

/**
 * The country's entries of the day, from `ranking_inputs` (projections/rankingInputs.ts): its
 * offer blocks (25 ids each: about 160 documents for a country of the sample), and the facts
 * blocks this run has not read yet for another country.
 */
async function computeEntries(job: CountryJob): Promise<RankingEntry[]> {
  const { readStore, collections, country } = job;
  const pageSize = job.pageSize ?? 500;
  const providersDoc = await readStore.get<ProvidersDoc>(collections.providers, country);
  const providers = providersDoc?.doc.providers ?? [];

  const candidates: RankingCandidate[] = [];
  const prefix = rankingOffersPrefix(country);
  let start: string | undefined;
  for (;;) {
    // Page by key, not offset, so each page is one range read whatever the adapter.
    const page = await readStore.scan<RankingOffersBlock>(collections.inputs, { prefix, start, limit: pageSize });
    if (page.length === 0) break;
    const blocks = page.map((d) => d.key.slice(prefix.length));
    const missing = blocks.filter((block) => !job.facts.has(block));
    // At most a page of blocks: one read.
    if (missing.length > 0) {
      const read = await readStore.getMany<RankingFactsBlock>(collections.inputs, missing.map(rankingFactsKey));
      missing.forEach((block, i) => job.facts.set(block, new Map((read[i]?.doc.facts ?? []).map((f) => [f.mediaId, f]))));
    }
    page.forEach((d, i) => {
      const facts = job.facts.get(blocks[i] as string);
      for (const title of d.doc.titles) {
        const offers = title.offers.map(unpackRankingOffer);
        candidates.push(candidateOf(title.mediaId, { kind: title.kind, offers }, facts?.get(title.mediaId) ?? null));
      }
    });
    const lastKey = page.at(-1)?.key;
    if (page.length < pageSize || lastKey === undefined) break;
    start = `${lastKey}\u0000`;
  }
  return rankTitles(candidates, providers, job.date);
}

/** A title whose media document is missing (not projected yet) is ranked on availability alone. */
export function candidateOf(mediaId: string, title: Pick<RankingCandidate, 'kind' | 'offers'>, d: RankingFacts | null): RankingCandidate {
  return {
    mediaId,
    kind: title.kind,
    offers: title.offers,
    tmdbRating: d?.tmdbRating ?? null,
    voteCount: d?.voteCount ?? null,
    popularity: d?.popularity ?? null,
    releaseDate: d?.releaseDate ?? null,
    lastAirDate: d?.lastAirDate ?? null,
    year: d?.year ?? null,
  };
}
