/**
 * Availability of a title in a country on a crawl day, computed without replaying earlier days.
 *
 * A title is listed in a country with a probability that grows with its popularity and the
 * market. A listed (title, country) has a fixed set of offer slots (1-8 present from the start,
 * 2 that may appear later). Each slot has its own event timeline, drawn from a generator seeded
 * by (seed, title, country, slot): events arrive with a small daily probability and remove the
 * offer, change its fields, announce an expiry (`availableTo`, removed the day after), or bring
 * a removed offer back. The offer set of day N is the state of every slot after the events up
 * to N, and "changed on day N" means some slot had an event on exactly that day. Some offers are
 * listed ahead of the day they come (or come back): from a few days before, with that day as
 * their `availableFrom`, as providers announce what is coming.
 */
import { FORMATS, PLATFORMS } from '../../contracts/domain.ts';
import type { ContentType, Format, Offer, Platform, PriceType } from '../../contracts/domain.ts';
import { slugify } from '../../contracts/ids.ts';
import type { CountryInfo } from './countries.ts';
import { dateOfEpochDay, epochDayOf } from './dates.ts';
import { hashInts, hashString, rngOf, SALT, unitOf, weightTotal } from './prng.ts';
import type { Rng } from './prng.ts';
import { catalogProviders } from './providers.ts';
import type { CatalogProvider } from './providers.ts';
import type { TitleSeed } from './titles.ts';

/** Daily probability of an event on one offer slot (~6 slots per listing: ~2% change a day). */
export const SLOT_EVENT_RATE = 0.0035;
/** Share of unchanged listings a later day's crawl re-observes anyway. */
export const RECRAWL_SHARE = 0.05;
/** Share of offers that arrive (or come back) listed ahead of their first day. */
export const ANNOUNCED_SHARE = 0.3;
/** Days ahead an announced offer is listed: 3 to 14. */
const ANNOUNCED_LEAD_MIN = 3;
const ANNOUNCED_LEAD_MAX = 14;

/**
 * How many days ahead the offer of a slot that comes on crawl day `day` is listed, or 0 when it
 * is not announced. Hashed from the slot and the day, apart from the slot's event draws, so an
 * announcement changes nothing else of the timeline.
 */
function announcedLead(seed: number, t: TitleSeed, countryIdx: number, slot: number, day: number): number {
  if (unitOf(seed, SALT.announced, t.key, countryIdx, slot, day) >= ANNOUNCED_SHARE) return 0;
  const span = ANNOUNCED_LEAD_MAX - ANNOUNCED_LEAD_MIN + 1;
  return ANNOUNCED_LEAD_MIN + Math.floor(unitOf(seed, SALT.announcedLead, t.key, countryIdx, slot, day) * span);
}

interface Pool {
  list: CatalogProvider[];
  /** Pick weights (provider weight, flattened a little so small services get some titles). */
  weights: number[];
  /** Their `weightTotal`, summed once rather than per pick. */
  total: number;
}

interface CountryPools {
  svod: Pool;
  tvod: Pool;
  free: Pool;
  channel: Pool;
  byId: Map<string, CatalogProvider>;
}

const pools = new Map<string, CountryPools>();

function poolsOf(country: string): CountryPools {
  const hit = pools.get(country);
  if (hit) return hit;
  const empty = (): Pool => ({ list: [], weights: [], total: 0 });
  const p: CountryPools = { svod: empty(), tvod: empty(), free: empty(), channel: empty(), byId: new Map() };
  for (const provider of catalogProviders(country)) {
    const pool = provider.kind === 'svod' ? p.svod : provider.kind === 'tvod' ? p.tvod : provider.kind === 'channel' ? p.channel : p.free;
    pool.list.push(provider);
    pool.weights.push(Math.pow(provider.weight, 0.9));
    p.byId.set(provider.id, provider);
  }
  for (const pool of [p.svod, p.tvod, p.free, p.channel]) pool.total = weightTotal(pool.weights);
  pools.set(country, p);
  return p;
}

/** How widely a title is distributed, 0.1 (obscure) .. 0.5 (a hit). */
function reachOf(t: TitleSeed): number {
  return 0.085 + 0.33 * Math.min(1, Math.log1p(t.basePopularity) / Math.log1p(60));
}

/** Whether a title is listed in a country at all (before looking at individual offers). */
export function isListed(seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number): boolean {
  return unitOf(seed, SALT.listed, t.key, countryIdx) < Math.min(0.85, reachOf(t) * country.market);
}

interface Slot {
  index: number;
  provider: CatalogProvider;
  /** Set for an add-on channel offer: `provider` is then the channel's parent. */
  addon: CatalogProvider | null;
  seasonNumber: number | null;
  /** Present on the title's first day in the country. */
  initial: boolean;
  /** Epoch day the offer went live, for `availableFrom` of initial offers. */
  launchedDay: number | null;
}

function weightedPick(rng: Rng, pool: Pool): CatalogProvider | null {
  if (pool.list.length === 0) return null;
  return pool.list[rng.weightedIndex(pool.weights, pool.total)] ?? null;
}

let slugCache: { key: number; slug: string } = { key: -1, slug: '' };

/** The title's slug; consecutive calls are for the same title, so one entry is enough. */
function slugOf(t: TitleSeed): string {
  if (slugCache.key !== t.key) slugCache = { key: t.key, slug: slugify(t.title) };
  return slugCache.slug;
}

const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LOWER_DIGITS = 'abcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

function uuid(rng: Rng): string {
  return `${rng.token(8, HEX)}-${rng.token(4, HEX)}-4${rng.token(3, HEX)}-${rng.pick(['8', '9', 'a', 'b'])}${rng.token(3, HEX)}-${rng.token(12, HEX)}`;
}

/**
 * The provider's page for a title. It depends on the title and provider (not the country, as
 * on real services), except where the service puts the country in its URLs (Apple TV).
 */
function webUrlOf(seed: number, t: TitleSeed, p: CatalogProvider, country: string, season: number | null): string {
  const rng = rngOf(seed, hashString(p.domain), t.key);
  const slug = slugOf(t);
  const movie = t.kind === 'movie';
  let url: string;
  switch (p.url) {
    case 'netflix':
      url = `https://www.netflix.com/title/${80_000_000 + (hashInts(seed, t.key) % 1_999_999)}`;
      break;
    case 'prime':
      url = `https://www.primevideo.com/detail/0${rng.token(25, UPPER_DIGITS)}`;
      break;
    case 'disney':
      url = `https://www.disneyplus.com/${movie ? 'movies' : 'series'}/${slug}/${rng.token(12)}`;
      break;
    case 'max':
      url = `https://play.max.com/${movie ? 'movie' : 'show'}/${uuid(rng)}`;
      break;
    case 'hulu':
      url = `https://www.hulu.com/${movie ? 'movie' : 'series'}/${slug}-${uuid(rng)}`;
      break;
    case 'apple':
      url = `https://tv.apple.com/${country.toLowerCase()}/${movie ? 'movie' : 'show'}/${slug}/umc.cmc.${rng.token(25, LOWER_DIGITS)}`;
      break;
    case 'youtube':
      url = `https://www.youtube.com/watch?v=${rng.token(11)}`;
      break;
    case 'gplay':
      url = movie
        ? `https://play.google.com/store/movies/details?id=${rng.token(12)}`
        : `https://play.google.com/store/tv/show?id=${rng.token(12)}`;
      break;
    case 'query':
      url = `https://${p.domain}/title?id=${rng.token(3, UPPER_DIGITS)}${rng.int(100000, 999999)}`;
      break;
    case 'path':
      url = `https://${p.domain}/${movie ? 'movie' : 'series'}/${slug}-${rng.int(10000, 9999999)}`;
      break;
  }
  if (season !== null) url += `${url.includes('?') ? '&' : '?'}season=${season}`;
  return url;
}

/**
 * The offer slots of a listed (title, country), fixed for the life of the catalog, so they are
 * kept across calls: they do not depend on the crawl day, and every
 * daily crawl walks every listing (drawing them again was a fifth of a later day's crawl).
 * Keyed by everything `drawSlots` reads, compared field by field in a bucket per title and
 * country: a key string built per call was a sixth of the crawl's time. Bounded, since a
 * long-lived process may crawl catalogs of any size.
 */
interface SlotEntry {
  seed: number;
  startDay: number;
  key: number;
  countryIdx: number;
  code: string;
  kind: ContentType;
  seasons: number;
  releaseDate: string | null;
  introDay: number;
  slots: Slot[];
}
const slotMemo = new Map<number, SlotEntry[]>();
let slotMemoSize = 0;
const SLOT_MEMO_LIMIT = 500_000;

function slotsOf(seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, startDay: number): Slot[] {
  const seasons = t.show?.episodes.length ?? 0;
  // A bucket, not the key: entries are told apart by every field below.
  const bucket = t.key * 4096 + countryIdx;
  const entries = slotMemo.get(bucket);
  if (entries !== undefined) {
    for (const e of entries) {
      if (e.key === t.key && e.countryIdx === countryIdx && e.seed === seed && e.startDay === startDay && e.code === country.code
        && e.kind === t.kind && e.seasons === seasons && e.releaseDate === t.releaseDate && e.introDay === t.introDay) return e.slots;
    }
  }
  if (slotMemoSize >= SLOT_MEMO_LIMIT) {
    slotMemo.clear();
    slotMemoSize = 0;
  }
  const slots = drawSlots(seed, t, country, countryIdx, startDay);
  const entry: SlotEntry = {
    seed, startDay, key: t.key, countryIdx, code: country.code, kind: t.kind, seasons, releaseDate: t.releaseDate, introDay: t.introDay, slots,
  };
  const bucketEntries = slotMemo.get(bucket);
  if (bucketEntries === undefined) slotMemo.set(bucket, [entry]);
  else bucketEntries.push(entry);
  slotMemoSize += 1;
  return slots;
}

/** Offers present on a listing's first day. */
const INITIAL_OFFERS = [1, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 7, 8];
/** Weights of an offer's kind (svod, tvod, free, channel) for movies and for shows. */
const MOVIE_KIND_WEIGHTS = [32, 36, 20, 12];
const SHOW_KIND_WEIGHTS = [50, 14, 22, 14];
const MOVIE_KIND_TOTAL = weightTotal(MOVIE_KIND_WEIGHTS);
const SHOW_KIND_TOTAL = weightTotal(SHOW_KIND_WEIGHTS);

function drawSlots(seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, startDay: number): Slot[] {
  const rng = rngOf(seed, SALT.offers, t.key, countryIdx);
  const pool = poolsOf(country.code);
  const initial = rng.pick(INITIAL_OFFERS);
  const total = initial + 2;
  const movie = t.kind === 'movie';
  const weights = movie ? MOVIE_KIND_WEIGHTS : SHOW_KIND_WEIGHTS;
  const weightsTotal = movie ? MOVIE_KIND_TOTAL : SHOW_KIND_TOTAL;
  const seasons = t.show?.episodes.length ?? 0;
  const slots: Slot[] = [];
  const released = t.releaseDate === null ? startDay - 3000 : epochDayOf(t.releaseDate);
  for (let attempt = 0; slots.length < total && attempt < total * 4; attempt++) {
    const kind = rng.weightedIndex(weights, weightsTotal);
    const list = kind === 0 ? pool.svod : kind === 1 ? pool.tvod : kind === 2 ? pool.free : pool.channel;
    const picked = weightedPick(rng, list);
    if (picked === null) continue;
    const addon = picked.kind === 'channel' ? picked : null;
    const provider = addon ? pool.byId.get(addon.parentId ?? '') : picked;
    if (!provider) continue;
    const seasonNumber = seasons > 1 && kind !== 2 && rng.chance(0.15) ? rng.int(1, seasons) : null;
    // One offer per provider, add-on and season: a scan of the few drawn so far (a set of
    // key strings cost more than the scan).
    if (slots.some((s) => s.provider.id === provider.id && s.addon?.id === addon?.id && s.seasonNumber === seasonNumber)) continue;
    const introEpoch = startDay + t.introDay;
    // Back-catalog offers went live some time between release and day 0.
    const earliest = Math.max(released, introEpoch - 2500);
    const launchedDay = rng.chance(0.9) ? Math.min(introEpoch, earliest + rng.int(0, Math.max(0, introEpoch - earliest))) : null;
    slots.push({
      index: slots.length,
      provider,
      addon,
      seasonNumber,
      initial: slots.length < initial,
      launchedDay,
    });
  }
  return slots;
}

const LANGUAGE_POOL = ['en', 'es', 'fr', 'de', 'it', 'pt', 'ja', 'ko', 'zh', 'ar', 'hi', 'ru', 'pl', 'tr', 'nl', 'sv'];

function sortedSubset<T extends string>(rng: Rng, all: readonly T[], min: number): T[] {
  const chosen = all.filter(() => rng.chance(0.6));
  for (const item of all) if (chosen.length < min && !chosen.includes(item)) chosen.push(item);
  return all.filter((x) => chosen.includes(x));
}

/**
 * The format sets an offer of each kind may have (older titles fewer), one drawn with equal
 * chance; constants, as an offer's formats are a filtered copy of the one drawn.
 */
const FORMAT_CHOICES = {
  svodOld: [['sd'], ['sd', 'hd'], ['hd']],
  svod: [['hd'], ['hd', 'uhd'], ['sd', 'hd'], ['hd', '4k'], ['sd', 'hd', 'uhd']],
  channel: [['hd'], ['sd', 'hd']],
  tvodOld: [['sd'], ['sd', 'hd']],
  tvod: [['sd', 'hd'], ['sd', 'hd', 'uhd'], ['hd'], ['hd', '4k']],
  free: [['sd'], ['hd'], ['sd', 'hd']],
  ads: [['sd'], ['sd', 'hd'], ['hd']],
} satisfies Record<string, ReadonlyArray<readonly Format[]>>;

/** The fields of an offer in one of its variants (a variant changes on a "change" event). */
function offerFields(
  seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, slot: Slot, variant: number,
): Pick<Offer, 'priceTypes' | 'formats' | 'audioLanguages' | 'subtitleLanguages' | 'platforms'> {
  const rng = rngOf(seed, SALT.variant, t.key, countryIdx, slot.index, variant);
  const kind = slot.addon ? 'channel' : slot.provider.kind;
  let priceTypes: PriceType[];
  let formats: readonly Format[];
  const old = (t.year ?? 2000) < 1985;
  switch (kind) {
    case 'svod':
      priceTypes = rng.chance(0.03) ? ['flatrate_and_buy'] : ['flatrate'];
      formats = rng.pick(old ? FORMAT_CHOICES.svodOld : FORMAT_CHOICES.svod);
      break;
    case 'channel':
      priceTypes = ['flatrate'];
      formats = rng.pick(FORMAT_CHOICES.channel);
      break;
    case 'tvod': {
      const u = rng.next();
      priceTypes = u < 0.6 ? ['rent', 'buy'] : u < 0.9 ? ['buy'] : ['rent'];
      formats = rng.pick(old ? FORMAT_CHOICES.tvodOld : FORMAT_CHOICES.tvod);
      break;
    }
    case 'fast':
      priceTypes = ['fast'];
      formats = ['sd'];
      break;
    case 'free':
      priceTypes = ['free'];
      formats = rng.pick(FORMAT_CHOICES.free);
      break;
    default:
      priceTypes = ['ads'];
      formats = rng.pick(FORMAT_CHOICES.ads);
  }
  const audio = new Set<string>([t.originalLanguage]);
  if (country.language !== t.originalLanguage && rng.chance(0.55)) audio.add(country.language === 'tl' ? 'en' : country.language);
  if (slot.provider.weight > 40 && rng.chance(0.3)) for (const l of rng.sample(LANGUAGE_POOL, 3)) audio.add(l);
  const subtitles = new Set<string>([country.language, 'en']);
  for (const l of rng.sample(LANGUAGE_POOL, rng.int(0, 5))) subtitles.add(l);
  return {
    priceTypes,
    formats: FORMATS.filter((f) => formats.includes(f)),
    audioLanguages: rng.chance(0.95) ? [...audio] : null,
    subtitleLanguages: rng.chance(0.9) ? [...subtitles] : null,
    platforms: rng.chance(0.95) ? sortedSubset<Platform>(rng, PLATFORMS, 2) : null,
  };
}

interface SlotState {
  slot: Slot;
  variant: number;
  /** Epoch day, or null when the provider does not say. */
  from: number | null;
  /** Crawl day of `availableTo`, or null. */
  to: number | null;
}

export interface ListingState {
  /** The offers present on the day (in slot order), not yet rendered. */
  present: SlotState[];
  /** Some offer was added, removed or changed on exactly this day. */
  changedToday: boolean;
}

/**
 * Walks each slot's event timeline up to crawl day `day` (day 0 = `startDay`). Cheap: it draws
 * a handful of numbers per slot and renders nothing, so a daily crawl can test every listing.
 */
export function listingOnDay(
  seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, day: number, startDay: number,
): ListingState {
  const present: SlotState[] = [];
  let changedToday = false;
  for (const slot of slotsOf(seed, t, country, countryIdx, startDay)) {
    const rng = rngOf(seed, SALT.slot, t.key, countryIdx, slot.index);
    let live = slot.initial;
    let variant = 0;
    let from: number | null = slot.launchedDay;
    let to: number | null = null;
    let removalDay: number | null = null;
    let lastEvent = -1;
    // Some offers on the first day already announce that they leave soon.
    if (live && rng.chance(0.04)) {
      to = t.introDay + rng.int(0, 20);
      removalDay = to + 1;
    }
    let d = t.introDay;
    /** The day of the slot's first event after `day`, once the walk is done. */
    let next: number;
    for (;;) {
      next = removalDay ?? d + rng.geometric(SLOT_EVENT_RATE);
      if (next > day) break;
      d = next;
      lastEvent = d;
      if (removalDay !== null) {
        // `availableTo` has passed: the provider took the title down.
        live = false;
        to = null;
        removalDay = null;
        continue;
      }
      const u = rng.next();
      if (!live) {
        live = true;
        variant++;
        // An offer listed ahead keeps the first day it announced.
        const dated = rng.chance(0.9);
        from = dated || announcedLead(seed, t, countryIdx, slot.index, d) > 0 ? startDay + d : null;
        to = null;
      } else if (u < 0.4) {
        live = false;
      } else if (u < 0.75) {
        variant++;
      } else {
        to = d + rng.int(2, 14);
        removalDay = to + 1;
      }
    }
    if (lastEvent === day && day > t.introDay) changedToday = true;
    if (live) {
      present.push({ slot, variant, from, to });
    } else if (removalDay === null && next - day <= ANNOUNCED_LEAD_MAX) {
      // Not live: the next event, drawn above, brings it (back) on day `next`. Listed ahead,
      // it is present from `lead` days before, as it will be then, starting on that day. (Most
      // such events are months away: no hash is drawn for them.)
      const lead = announcedLead(seed, t, countryIdx, slot.index, next);
      if (lead > 0 && day >= next - lead) {
        present.push({ slot, variant: variant + 1, from: startDay + next, to: null });
        if (day === next - lead && day > t.introDay) changedToday = true;
      }
    }
  }
  return { present, changedToday };
}

/** The offers of a listing state, as an AvailabilityObserved carries them. */
export function renderOffers(
  seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, state: ListingState, startDay: number,
): Offer[] {
  return state.present.map(({ slot, variant, from, to }) => ({
    providerId: slot.provider.id,
    addonProviderId: slot.addon?.id ?? null,
    seasonNumber: slot.seasonNumber,
    episodeNumber: null,
    webUrl: webUrlOf(seed, t, slot.addon ?? slot.provider, country.code, slot.seasonNumber),
    ...offerFields(seed, t, country, countryIdx, slot, variant),
    availableFrom: from === null ? null : dateOfEpochDay(from),
    availableTo: to === null ? null : dateOfEpochDay(startDay + to),
  }));
}

/** The offer set of a listed (title, country) on crawl day `day`. */
export function offersOnDay(
  seed: number, t: TitleSeed, country: CountryInfo, countryIdx: number, day: number, startDay: number,
): { offers: Offer[]; changedToday: boolean } {
  const state = listingOnDay(seed, t, country, countryIdx, day, startDay);
  return { offers: renderOffers(seed, t, country, countryIdx, state, startDay), changedToday: state.changedToday };
}

/** Whether a later day's crawl re-observes an unchanged listing. */
export function recrawledAnyway(seed: number, t: TitleSeed, countryIdx: number, day: number): boolean {
  return unitOf(seed, SALT.recrawlOffers, t.key, countryIdx, day) < RECRAWL_SHARE;
}
