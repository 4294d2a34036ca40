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
 * unfinished is ranked again from its first part.
 */
import type { RankingEntry } from '../../contracts/domain.ts';
import { AppError, isAppError } from '../../contracts/errors.ts';
import { isCountryCode, isIsoDate, streams } from '../../contracts/ids.ts';
import type { Clock, EventStore, ExpectedRevision, ReadStore } from '../../contracts/ports.ts';
import type { ProvidersDoc, RankingFacts, RankingFactsBlock, RankingOffersBlock } from '../../contracts/readModels.ts';
import { providersProjection } from '../../projections/providers.ts';
import { rankingFactsKey, rankingInputsProjection, rankingOffersPrefix } from '../../projections/rankingInputs.ts';
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

export async function rankDay(options: RankDayOptions): Promise<CountryRanking[]> {
  const date = options.date ?? options.clock.now().toISOString().slice(0, 10);
  if (!isIsoDate(date)) {
    throw new AppError('invalid_parameter', `ranking date ${date} is not a YYYY-MM-DD calendar date`, { details: { parameter: 'date' } });
  }
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
  // One country at a time: ranking four at once on FerretDB made the first day's ranking slower
  // (243 s against 154 s at load 9) and starved the server's health checks.
  for (const raw of countries) {
    if (options.signal?.aborted === true) break;
    results.push(await rankCountry({ ...options, country: raw.toUpperCase(), date, chartSize, collections, facts }));
  }
  return results;
}

interface CountryJob extends RankDayOptions {
  country: string;
  date: string;
  chartSize: number;
  collections: { inputs: string; providers: string };
  /** Facts blocks read so far in this run, by block. */
  facts: Map<string, Map<string, RankingFacts>>;
}

async function rankCountry(job: CountryJob): Promise<CountryRanking> {
  const stream = streams.ranking(job.country);
  const maxAttempts = job.maxAttempts ?? 3;
  for (let attempt = 1; ; attempt += 1) {
    const history = await readRankingHistory(job.eventStore, stream, job.date, job.chartSize);
    if (history.exists) {
      return { country: job.country, date: job.date, status: 'exists', ranked: 0, positionChanges: 0 };
    }
    const entries = await computeEntries(job);
    const changes = diffCharts(history.previous?.entries ?? null, entries, job.chartSize);
    const latestDate = history.latest !== null && history.latest > job.date ? history.latest : job.date;
    const events = dayEvents(
      { country: job.country, date: job.date, formulaVersion: FORMULA_VERSION, latestDate, entries, changes, metadata: { producer: 'ranking' } },
      job.partSize ?? PART_ENTRIES,
    );
    let expected: ExpectedRevision = history.revision === -1 ? 'no_stream' : history.revision;
    try {
      for (const batch of packAppends(events, job.maxAppendBytes ?? MAX_APPEND_BYTES)) {
        expected = (await job.eventStore.append(stream, batch, expected)).nextExpectedRevision;
      }
      return { country: job.country, date: job.date, status: 'appended', ranked: entries.length, positionChanges: changes.length };
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
      for (const title of d.doc.titles) candidates.push(candidateOf(title.mediaId, title, facts?.get(title.mediaId) ?? null));
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
