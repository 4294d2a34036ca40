/**
 * The daily ranking formula, version 1. Pure and deterministic: the same titles, providers and
 * date always give the same entries, in the same order, with the same numbers.
 *
 * For each title with at least one offer valid on the ranking date in the country:
 *
 *   availability A = S / (S + 1), S = sum over the title's distinct providers p there of
 *                    w(p) * f(p), where
 *                      w(p) = provider weight / the heaviest provider weight in the country
 *                             (0..1; 0 for a provider the country's list does not know),
 *                      f(p) = the best price-type factor among p's offers for the title:
 *                             1 for flatrate, free, ads, fast, flatrate_and_buy (watchable
 *                             with no extra payment), 0.5 for rent and buy, 0.25 for cinema,
 *                             0.5 when the crawler gave no price types.
 *                    S/(S+1) saturates: being on many providers helps, but less and less.
 *   rating R       = Bayesian average / 10 = ((v/(v+m))*r + (m/(v+m))*C) / 10, with r the
 *                    TMDB rating, v its vote count, m = 500 votes (how many votes it takes to
 *                    count as much as the prior) and C = 6.5 (a typical catalog mean rating).
 *                    No rating or no votes gives the prior C: few votes cannot make a title.
 *   recency T      = 0.5 ^ (age / 2): halves every 2 years of age, where age is the time in
 *                    years (days / 365.25) from the newest of lastAirDate and releaseDate
 *                    (1 July of `year` when both are missing) to the ranking date; 0 age for a
 *                    future date; T = 0 when no date or year is known.
 *   popularity P   = p / (p + 50), p the TMDB popularity (0 when missing or negative).
 *
 *   points = 40*A + 30*R + 15*T + 15*P   (0..100), rounded to 6 decimals
 *   score  = 100 * points / (highest points in the country), rounded to 2 decimals
 *
 * Sorted by points descending, ties by media id ascending (code-unit order); positions 1..N.
 */
import type { ContentType, Offer, PriceType, RankingEntry } from '../../contracts/domain.ts';

export const FORMULA_VERSION = 1;

export const WEIGHTS = { availability: 40, rating: 30, recency: 15, popularity: 15 } as const;
/** Bayesian prior: the vote count that weighs as much as the prior, and the prior mean rating. */
export const RATING_PRIOR = { votes: 500, mean: 6.5 } as const;
export const RECENCY_HALF_LIFE_YEARS = 2;
export const POPULARITY_HALF_POINT = 50;

const PRICE_FACTOR: Record<PriceType, number> = {
  flatrate: 1,
  free: 1,
  ads: 1,
  fast: 1,
  flatrate_and_buy: 1,
  rent: 0.5,
  buy: 0.5,
  cinema: 0.25,
};
const UNKNOWN_PRICE_FACTOR = 0.5;

/** What the formula needs of a title in one country. */
export interface RankingCandidate {
  mediaId: string;
  kind: ContentType;
  offers: ReadonlyArray<Pick<Offer, 'providerId' | 'priceTypes' | 'availableFrom' | 'availableTo'>>;
  tmdbRating: number | null;
  voteCount: number | null;
  popularity: number | null;
  releaseDate: string | null;
  lastAirDate: string | null;
  year: number | null;
}

export interface ProviderWeight {
  id: string;
  weight: number;
}

export interface PointsBreakdown {
  availability: number;
  rating: number;
  recency: number;
  popularity: number;
  points: number;
}

/** An offer counts on `date` when the date is inside [availableFrom, availableTo] (open ends). */
export function offerValidOn(offer: Pick<Offer, 'availableFrom' | 'availableTo'>, date: string): boolean {
  return (offer.availableFrom === null || offer.availableFrom <= date) && (offer.availableTo === null || offer.availableTo >= date);
}

/** Provider weights scaled so the heaviest provider of the country weighs 1. */
export function normalisedWeights(providers: readonly ProviderWeight[]): Map<string, number> {
  const max = providers.reduce((m, p) => Math.max(m, p.weight), 0);
  const out = new Map<string, number>();
  for (const p of providers) out.set(p.id, max > 0 ? Math.max(0, p.weight) / max : 0);
  return out;
}

export function priceFactor(priceTypes: readonly PriceType[] | null): number {
  if (priceTypes === null || priceTypes.length === 0) return UNKNOWN_PRICE_FACTOR;
  // A loop, not Math.max(...map): the ranking calls this for every offer of every title daily.
  let best = -Infinity;
  for (const t of priceTypes) best = Math.max(best, PRICE_FACTOR[t] ?? UNKNOWN_PRICE_FACTOR);
  return best;
}

/** A in 0..1 from the offers valid on the date (the caller filters by date). */
export function availabilityFactor(
  offers: RankingCandidate['offers'],
  weights: ReadonlyMap<string, number>,
): number {
  return availabilityOn(offers, weights, null);
}

/**
 * A from the offers valid on `date` (all of them when null). The providers' terms are summed in
 * the order each provider first appears, as a Map keyed by provider would: the same sum to the
 * last bit. Arrays, not a Map per title: a title has a handful of offers.
 */
function availabilityOn(offers: RankingCandidate['offers'], weights: ReadonlyMap<string, number>, date: string | null): number {
  return availabilitySum(offers, weights, date) ?? 0;
}

/** A, or null when no offer is valid on `date` (the title is not ranked): one pass over the offers for both. */
function availabilitySum(offers: RankingCandidate['offers'], weights: ReadonlyMap<string, number>, date: string | null): number | null {
  const ids: string[] = [];
  const best: number[] = [];
  for (const o of offers) {
    if (date !== null && !offerValidOn(o, date)) continue;
    const factor = priceFactor(o.priceTypes);
    const at = ids.indexOf(o.providerId);
    if (at === -1) {
      ids.push(o.providerId);
      best.push(Math.max(0, factor));
    } else {
      best[at] = Math.max(best[at] as number, factor);
    }
  }
  if (ids.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < ids.length; i += 1) sum += (weights.get(ids[i] as string) ?? 0) * (best[i] as number);
  return sum / (sum + 1);
}

/** The Bayesian average rating on the 0..10 scale. */
export function bayesianRating(rating: number | null, votes: number | null): number {
  const { votes: m, mean: c } = RATING_PRIOR;
  if (rating === null || votes === null || votes <= 0) return c;
  return (votes / (votes + m)) * rating + (m / (votes + m)) * c;
}

const DAY_MS = 86_400_000;

/** T in 0..1 from the title's newest date relative to the ranking date. */
export function recencyFactor(candidate: Pick<RankingCandidate, 'releaseDate' | 'lastAirDate' | 'year'>, date: string): number {
  return recencyAt(candidate, dayMs(date));
}

/** Midnight UTC of a `YYYY-MM-DD` in ms (NaN when it is not a date). */
function dayMs(date: string): number {
  let ms = parsedDays.get(date);
  if (ms === undefined) {
    ms = Date.parse(`${date}T00:00:00Z`);
    // Bounded: a ranking day meets a few thousand distinct dates, the next day the same ones.
    if (parsedDays.size >= 100_000) parsedDays.clear();
    parsedDays.set(date, ms);
  }
  return ms;
}

/**
 * Dates parsed so far: the ranking parses every title's newest date once per country (fifty
 * times a day on the sample), and the parse was a tenth of the formula's time.
 */
const parsedDays = new Map<string, number>();

/** T with the ranking date already parsed (rankTitles parses it once, not once per title). */
function recencyAt(candidate: Pick<RankingCandidate, 'releaseDate' | 'lastAirDate' | 'year'>, to: number): number {
  const { releaseDate, lastAirDate } = candidate;
  let newest: string | null = releaseDate !== null && lastAirDate !== null ? (releaseDate > lastAirDate ? releaseDate : lastAirDate) : (releaseDate ?? lastAirDate);
  if (newest === null && candidate.year !== null) newest = `${String(candidate.year).padStart(4, '0')}-07-01`;
  if (newest === null) return 0;
  const from = dayMs(newest);
  if (Number.isNaN(from) || Number.isNaN(to)) return 0;
  const ageYears = Math.max(0, to - from) / DAY_MS / 365.25;
  return 0.5 ** (ageYears / RECENCY_HALF_LIFE_YEARS);
}

export function popularityFactor(popularity: number | null): number {
  const p = popularity === null || popularity < 0 ? 0 : popularity;
  return p / (p + POPULARITY_HALF_POINT);
}

function round(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

/** Points of one title, with the parts (each 0..1) for explanation and tests. */
export function pointsOf(
  candidate: RankingCandidate,
  weights: ReadonlyMap<string, number>,
  date: string,
): PointsBreakdown {
  return pointsAt(candidate, weights, date, dayMs(date));
}

function pointsAt(candidate: RankingCandidate, weights: ReadonlyMap<string, number>, date: string, day: number): PointsBreakdown {
  return breakdown(candidate, availabilityOn(candidate.offers, weights, date), day);
}

/** The parts and points of a title whose availability A is known. */
function breakdown(candidate: RankingCandidate, availability: number, day: number): PointsBreakdown {
  const rating = bayesianRating(candidate.tmdbRating, candidate.voteCount) / 10;
  const recency = recencyAt(candidate, day);
  const popularity = popularityFactor(candidate.popularity);
  const points = round(
    WEIGHTS.availability * availability + WEIGHTS.rating * rating + WEIGHTS.recency * recency + WEIGHTS.popularity * popularity,
    6,
  );
  return { availability, rating, recency, popularity, points };
}

/** The full ranking of a country on `date`; titles with no offer valid that day are left out. */
export function rankTitles(
  candidates: readonly RankingCandidate[],
  providers: readonly ProviderWeight[],
  date: string,
): RankingEntry[] {
  const weights = normalisedWeights(providers);
  const day = dayMs(date);
  const scored: Array<{ c: RankingCandidate; points: number }> = [];
  for (const c of candidates) {
    const availability = availabilitySum(c.offers, weights, date);
    if (availability !== null) scored.push({ c, points: breakdown(c, availability, day).points });
  }
  scored.sort((a, b) => b.points - a.points || (a.c.mediaId < b.c.mediaId ? -1 : a.c.mediaId > b.c.mediaId ? 1 : 0));
  const top = scored[0]?.points ?? 0;
  return scored.map(({ c, points }, i) => ({
    mediaId: c.mediaId,
    kind: c.kind,
    position: i + 1,
    score: top > 0 ? round((100 * points) / top, 2) : 0,
    points,
  }));
}
