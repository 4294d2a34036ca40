/**
 * Collections and featured selections. While a crawl streams the catalog it keeps, for each
 * collection theme, only the best few dozen candidates (and the most popular titles for
 * featured), so memory stays flat however large the catalog; at the end each country's
 * collections and featured lists are picked from those candidates among titles available there.
 */
import type { CollectionObservedData, FeaturedObservedData, MediaRef } from '../../contracts/observations.ts';
import { countryIndex, countryInfo } from './countries.ts';
import { hashString, rngOf, SALT } from './prng.ts';
import type { TitleSeed } from './titles.ts';

export interface CollectionTheme {
  key: string;
  name: string;
  description: string;
  /** Items carry positions (a ranked list) or not (an unordered shelf). */
  ordered: boolean;
  matches(t: TitleSeed): boolean;
  score(t: TitleSeed): number;
}

const has = (t: TitleSeed, ...slugs: string[]) => slugs.some((s) => t.genreSlugs.includes(s));
const acclaim = (t: TitleSeed) => (t.imdbRating ?? 5) * Math.log10(10 + (t.imdbVotes ?? 0));
const movie = (t: TitleSeed) => t.kind === 'movie';
const decade = (from: number) => (t: TitleSeed) => movie(t) && t.year !== null && t.year >= from && t.year < from + 10;

export const THEMES: readonly CollectionTheme[] = [
  { key: 'best-of-the-80s', name: 'Best of the 80s', description: 'Big hair, bigger stories: the decade’s finest.', ordered: true, matches: decade(1980), score: acclaim },
  { key: 'best-of-the-90s', name: 'Best of the 90s', description: 'The films that defined the nineties.', ordered: true, matches: decade(1990), score: acclaim },
  { key: 'noughties-favorites', name: '2000s Favorites', description: 'Crowd-pleasers from the first decade of the century.', ordered: true, matches: decade(2000), score: acclaim },
  { key: 'golden-age-classics', name: 'Golden Age Classics', description: 'Timeless films from before 1970.', ordered: true, matches: (t) => movie(t) && t.year !== null && t.year < 1970, score: acclaim },
  { key: 'award-season-favorites', name: 'Award Season Favorites', description: 'Critically acclaimed films that collected the trophies.', ordered: true, matches: (t) => movie(t) && (t.imdbRating ?? 0) >= 7.5 && (t.imdbVotes ?? 0) >= 50_000, score: acclaim },
  { key: 'critics-picks', name: 'Critics’ Picks', description: 'Rated fresh by nine critics in ten.', ordered: false, matches: (t) => (t.rtRating ?? 0) >= 90, score: (t) => t.rtRating ?? 0 },
  { key: 'cult-classics', name: 'Cult Classics', description: 'Box-office misfits that found their audience.', ordered: false, matches: (t) => movie(t) && (t.imdbRating ?? 0) >= 7 && (t.gross ?? 0) < 30_000_000 && (t.imdbVotes ?? 0) >= 15_000, score: acclaim },
  { key: 'hidden-gems', name: 'Hidden Gems', description: 'Great titles you may have missed.', ordered: false, matches: (t) => (t.imdbRating ?? 0) >= 7 && (t.imdbVotes ?? 0) < 15_000, score: (t) => t.imdbRating ?? 0 },
  { key: 'blockbusters', name: 'Blockbusters', description: 'The biggest box-office hits.', ordered: true, matches: (t) => (t.gross ?? 0) > 150_000_000, score: (t) => t.gross ?? 0 },
  { key: 'family-movie-night', name: 'Family Movie Night', description: 'Something for every age.', ordered: false, matches: (t) => movie(t) && (t.age <= 6 || has(t, 'family', 'animation')), score: (t) => t.basePopularity },
  { key: 'horror-nights', name: 'Horror Nights', description: 'Lights off, volume up.', ordered: false, matches: (t) => has(t, 'horror'), score: acclaim },
  { key: 'laugh-out-loud', name: 'Laugh Out Loud', description: 'Comedies guaranteed to lift the mood.', ordered: false, matches: (t) => has(t, 'comedy', 'black-comedy'), score: acclaim },
  { key: 'date-night', name: 'Date Night', description: 'Romance, with or without the comedy.', ordered: false, matches: (t) => has(t, 'romance'), score: (t) => t.basePopularity },
  { key: 'wild-west', name: 'The Wild West', description: 'Outlaws, sheriffs and wide open skies.', ordered: false, matches: (t) => has(t, 'western'), score: acclaim },
  { key: 'true-stories', name: 'True Stories', description: 'Documentaries that stay with you.', ordered: false, matches: (t) => has(t, 'documentary'), score: acclaim },
  { key: 'musicals-and-concerts', name: 'Musicals & Concerts', description: 'Sing along.', ordered: false, matches: (t) => has(t, 'musical', 'music', 'concert'), score: acclaim },
  { key: 'adrenaline-rush', name: 'Adrenaline Rush', description: 'Action and adventure at full throttle.', ordered: true, matches: (t) => has(t, 'action', 'adventure', 'action-adventure'), score: (t) => t.basePopularity },
  { key: 'edge-of-your-seat', name: 'Edge of Your Seat', description: 'Thrillers, mysteries and crime.', ordered: true, matches: (t) => has(t, 'thriller', 'mystery', 'crime'), score: acclaim },
  { key: 'other-worlds', name: 'Other Worlds', description: 'Science fiction and fantasy.', ordered: false, matches: (t) => has(t, 'science-fiction', 'fantasy', 'sci-fi-fantasy'), score: acclaim },
  { key: 'binge-worthy-series', name: 'Binge-Worthy Series', description: 'Shows with seasons to spare.', ordered: true, matches: (t) => (t.show?.episodes.length ?? 0) >= 3, score: (t) => t.basePopularity },
  { key: 'limited-series', name: 'Limited Series', description: 'One season, one story.', ordered: false, matches: (t) => t.show !== null && t.show.episodes.length === 1 && !t.show.inProduction, score: (t) => t.basePopularity },
  { key: 'new-arrivals', name: 'New Arrivals', description: 'Just added to the catalog.', ordered: true, matches: (t) => t.introDay > 0 || (t.year ?? 0) >= 2009, score: (t) => t.introDay * 1e6 + (t.releaseDate ? Date.parse(t.releaseDate) / 1e8 : 0) },
];

/** Country-less collections (shown everywhere), and the one that gets withdrawn on day 2. */
export const GLOBAL_THEMES: readonly CollectionTheme[] = [
  { key: 'staff-picks', name: 'Staff Picks', description: 'What our editors are watching.', ordered: true, matches: (t) => (t.imdbRating ?? 0) >= 7.8, score: (t) => t.basePopularity },
  { key: 'festival-favorites', name: 'Festival Favorites', description: 'Premiered on the festival circuit.', ordered: false, matches: (t) => (t.rtRating ?? 0) >= 85 && (t.gross ?? Infinity) < 50_000_000, score: acclaim },
  { key: 'holiday-countdown', name: 'Holiday Countdown', description: 'Cosy titles for the holidays (a seasonal list).', ordered: true, matches: (t) => has(t, 'family', 'comedy', 'romance'), score: (t) => t.basePopularity },
];

export const WITHDRAWN_THEME = 'holiday-countdown';
/** The crawl day from which the seasonal collection is withdrawn. */
export const WITHDRAW_DAY = 2;

/** Keeps the `capacity` best-scoring titles seen so far. */
export class TopK {
  private items: Array<{ score: number; t: TitleSeed }> = [];
  private floor = -Infinity;

  constructor(private readonly capacity: number) {}

  offer(t: TitleSeed, score: number): void {
    if (this.items.length >= this.capacity && score <= this.floor) return;
    this.items.push({ score, t });
    if (this.items.length > this.capacity * 2) this.compact();
  }

  private compact(): void {
    this.items.sort((a, b) => b.score - a.score || a.t.index - b.t.index);
    this.items.length = Math.min(this.items.length, this.capacity);
    this.floor = this.items[this.items.length - 1]?.score ?? -Infinity;
  }

  /** Best first. */
  values(): TitleSeed[] {
    this.compact();
    return this.items.map((x) => x.t);
  }
}

const ref = (t: TitleSeed): MediaRef => ({ contentType: t.kind, sourceId: t.sourceId });

/** Candidates per theme and for featured, collected during the catalog pass. */
export class Curator {
  private readonly themes = new Map<string, TopK>();
  private readonly popular = new TopK(300);

  constructor() {
    for (const theme of [...THEMES, ...GLOBAL_THEMES]) this.themes.set(theme.key, new TopK(60));
  }

  observe(t: TitleSeed, popularityToday: number): void {
    for (const theme of [...THEMES, ...GLOBAL_THEMES]) {
      if (theme.matches(t)) this.themes.get(theme.key)?.offer(t, theme.score(t));
    }
    this.popular.offer(t, popularityToday);
  }

  /**
   * Collections of the day: 5-20 per country (themes with at least three titles available
   * there), plus the global ones. `available` tells whether a title has offers in a country.
   */
  *collections(
    seed: number, day: number, countries: readonly string[], available: (t: TitleSeed, country: string) => boolean,
  ): Generator<CollectionObservedData> {
    const candidates = new Map<string, TitleSeed[]>();
    for (const [key, top] of this.themes) candidates.set(key, top.values());
    for (const theme of GLOBAL_THEMES) {
      const items = (candidates.get(theme.key) ?? []).slice(0, 25);
      if (theme.key === WITHDRAWN_THEME && day >= WITHDRAW_DAY) {
        yield { slug: theme.key, status: 'withdrawn', name: theme.name, description: theme.description, country: null, language: 'en', items: [] };
        continue;
      }
      yield {
        slug: theme.key, status: 'published', name: theme.name, description: theme.description, country: null, language: 'en',
        items: items.map((t, i) => ({ ...ref(t), position: theme.ordered ? i + 1 : null })),
      };
    }
    for (const country of countries) {
      const ci = countryIndex(country);
      const rng = rngOf(seed, SALT.collection, ci);
      const wanted = rng.int(5, 20);
      let made = 0;
      for (const theme of rng.sample(THEMES, THEMES.length)) {
        if (made >= wanted) break;
        const size = rngOf(seed, SALT.collection, ci, hashString(theme.key)).int(10, 30);
        const items: TitleSeed[] = [];
        for (const t of candidates.get(theme.key) ?? []) {
          if (items.length >= size) break;
          if (available(t, country)) items.push(t);
        }
        if (items.length < 3) continue;
        made++;
        yield {
          slug: `${theme.key}-${country.toLowerCase()}`,
          status: 'published',
          name: theme.name,
          description: theme.description,
          country,
          language: 'en',
          items: items.map((t, i) => ({ ...ref(t), position: theme.ordered ? i + 1 : null })),
        };
      }
    }
  }

  /** The daily selection (new every day) and, every seventh day, the weekly one. */
  *featured(
    seed: number, day: number, countries: readonly string[], available: (t: TitleSeed, country: string) => boolean,
  ): Generator<FeaturedObservedData> {
    const popular = this.popular.values();
    for (const country of countries) {
      const ci = countryIndex(country);
      const pool = popular.filter((t) => available(t, country)).slice(0, 120);
      const periods: Array<['daily' | 'weekly', number]> = [['daily', day]];
      if (day % 7 === 0) periods.push(['weekly', 1_000_000 + Math.floor(day / 7)]);
      for (const [period, key] of periods) {
        const rng = rngOf(seed, SALT.featured, ci, key);
        const picked = rng.sample(pool, rng.int(10, 20));
        yield { country, period, items: picked.map((t, i) => ({ ...ref(t), position: i + 1 })) };
      }
    }
  }
}

/** Whether a country code belongs to the catalog (for option checks). */
export function knownCountry(code: string): boolean {
  return countryInfo(code) !== undefined;
}
