/**
 * Per-country provider lists built from providerTable.ts. They do not depend on the crawl seed:
 * a provider list is the real-world part of the sample, so `netflix` is in every country for
 * every seed. Weights drift a little from week to week (the weekly re-crawl of a provider list
 * sees some changes), which is the only way the lists change over days.
 */
import type { Provider } from '../../contracts/domain.ts';
import { AppError } from '../../contracts/errors.ts';
import { COUNTRIES, countryIndex, countryInfo } from './countries.ts';
import type { CountryInfo } from './countries.ts';
import { hashString, unitOf } from './prng.ts';
import {
  CHANNEL_PARENTS,
  CHANNEL_PARTNERS,
  MAJOR_PROVIDERS,
  NICHE_PROVIDERS,
  REGIONAL_PROVIDERS,
} from './providerTable.ts';
import type { ProviderDef, ProviderKind, UrlStyle } from './providerTable.ts';

/** A provider as the crawler knows it: the public fields plus what the offer generator needs. */
export interface CatalogProvider extends Provider {
  kind: ProviderKind;
  url: UrlStyle;
  domain: string;
  /** Base weight before the weekly drift. */
  baseWeight: number;
}

/** Fewest and most providers a country lists (the API contract: about 50-200). */
export const MIN_PROVIDERS = 55;
export const MAX_PROVIDERS = 200;

const SALT_LIST = hashString('provider-list');
const SALT_JITTER = hashString('provider-jitter');
const SALT_DRIFT = hashString('provider-drift');

function servedIn(where: readonly string[], country: CountryInfo): boolean {
  let included = false;
  for (const token of where) {
    const negate = token.startsWith('!');
    const t = negate ? token.slice(1) : token;
    const matches = t === '*' || t === country.code || (t.startsWith('@') && t.slice(1) === country.region);
    if (!matches) continue;
    if (negate) return false;
    included = true;
  }
  return included;
}

interface ChannelDef extends ProviderDef {
  parentId: string;
}

function channelDefs(): ChannelDef[] {
  const out: ChannelDef[] = [];
  for (const parent of CHANNEL_PARENTS) {
    const parentDef = MAJOR_PROVIDERS.find((p) => p.id === parent.parent);
    if (!parentDef) throw new AppError('internal', `channel parent ${parent.parent} is not a provider`);
    for (const partner of CHANNEL_PARTNERS) {
      out.push({
        id: `${parent.prefix}-${partner.key}`,
        name: `${partner.name} ${parent.suffix}`,
        kind: 'channel',
        weight: Math.round(partner.weight * 40) / 100,
        // Where the partner sells; buildCountry also needs the parent to sell channels there.
        where: partner.where,
        domain: parentDef.domain,
        url: parentDef.url,
        parentId: parent.parent,
      });
    }
  }
  return out;
}

const CHANNELS = channelDefs();

/**
 * Three-letter short ids, unique over every provider of every country. Listed ones keep their
 * code; the others get the first free code from the letters of their id, in table order, so the
 * assignment never changes between runs.
 */
function assignShortIds(): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  const all: ProviderDef[] = [...MAJOR_PROVIDERS, ...REGIONAL_PROVIDERS, ...NICHE_PROVIDERS, ...CHANNELS];
  for (const p of all) {
    if (p.shortId === undefined) continue;
    if (used.has(p.shortId)) throw new AppError('internal', `short id ${p.shortId} is used twice`);
    used.add(p.shortId);
    out.set(p.id, p.shortId);
  }
  for (const p of all) {
    if (out.has(p.id)) continue;
    const channel = CHANNELS.find((c) => c.id === p.id);
    // A channel reads as its parent's initial plus the partner: `amazon-channel-mubi` -> `amu`.
    const letters = channel
      ? channel.parentId[0] + p.id.slice(p.id.lastIndexOf('channel-') + 'channel-'.length).replace(/[^a-z]/g, '')
      : p.id.replace(/[^a-z0-9]/g, '');
    let code: string | undefined;
    outer: for (let i = 1; i < letters.length; i++) {
      for (let j = i + 1; j < letters.length; j++) {
        const candidate = `${letters[0]}${letters[i]}${letters[j]}`;
        if (!used.has(candidate)) {
          code = candidate;
          break outer;
        }
      }
    }
    for (let n = 0; code === undefined; n++) {
      const candidate = `${letters[0] ?? 'x'}${n.toString(36).padStart(2, '0')}`;
      if (!used.has(candidate)) code = candidate;
    }
    used.add(code);
    out.set(p.id, code);
  }
  return out;
}

const SHORT_IDS = assignShortIds();

function toCatalog(def: ProviderDef, country: CountryInfo, parentId: string | null): CatalogProvider {
  const jitter = 0.85 + 0.3 * unitOf(SALT_JITTER, hashString(def.id), countryIndex(country.code));
  const weight = Math.round(def.weight * jitter * 100) / 100;
  return {
    id: def.id,
    parentId,
    name: def.name,
    logo: `/logos/${def.id}.png`,
    shortId: SHORT_IDS.get(def.id) ?? null,
    weight,
    kind: def.kind,
    url: def.url,
    domain: def.domain,
    baseWeight: weight,
  };
}

function buildCountry(country: CountryInfo): CatalogProvider[] {
  const ci = countryIndex(country.code);
  const list: CatalogProvider[] = [];
  for (const def of [...MAJOR_PROVIDERS, ...REGIONAL_PROVIDERS]) {
    if (servedIn(def.where, country)) list.push(toCatalog(def, country, null));
  }
  // Niche services: more of them in large markets, then padded so a small market still lists
  // the 50+ a real country has.
  const niche = NICHE_PROVIDERS.filter((def) => servedIn(def.where, country)).map((def) => ({
    def,
    u: unitOf(SALT_LIST, hashString(def.id), ci),
  }));
  const threshold = 0.2 + 0.45 * country.market;
  const chosen = new Set(niche.filter((n) => n.u < threshold).map((n) => n.def.id));
  const padding = niche.filter((n) => !chosen.has(n.def.id)).sort((a, b) => a.u - b.u);
  for (const n of niche) if (chosen.has(n.def.id)) list.push(toCatalog(n.def, country, null));
  const present = new Set(list.map((p) => p.id));
  for (const channel of CHANNELS) {
    if (!present.has(channel.parentId)) continue;
    const parentRule = CHANNEL_PARENTS.find((p) => p.parent === channel.parentId);
    if (!parentRule || !parentRule.where.includes(country.code)) continue;
    if (!servedIn(channel.where, country)) continue;
    if (unitOf(SALT_LIST, hashString(channel.id), ci) >= parentRule.share) continue;
    list.push(toCatalog(channel, country, channel.parentId));
  }
  for (const n of padding) {
    if (list.length >= MIN_PROVIDERS) break;
    list.push(toCatalog(n.def, country, null));
  }
  list.sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : 1));
  return list.slice(0, MAX_PROVIDERS);
}

const cache = new Map<string, readonly CatalogProvider[]>();

/** The providers a country lists (before the weekly weight drift), heaviest first. */
export function catalogProviders(country: string): readonly CatalogProvider[] {
  const code = country.toUpperCase();
  const hit = cache.get(code);
  if (hit) return hit;
  const info = countryInfo(code);
  if (!info) throw new AppError('invalid_parameter', `the sample catalog does not cover country ${code}`, { details: { country } });
  const list = buildCountry(info);
  cache.set(code, list);
  return list;
}

/** Probability that a provider's weight is re-estimated in a given week. */
const DRIFT_SHARE = 0.1;

/**
 * The provider list a crawl of `day` observes: weights of about 10% of providers are
 * re-estimated each week (week 0 is the base list).
 */
export function providersOnDay(country: string, day: number): Provider[] {
  const week = Math.floor(day / 7);
  const ci = countryIndex(country);
  return catalogProviders(country).map((p) => {
    let weight = p.baseWeight;
    if (week > 0) {
      const h = hashString(p.id);
      if (unitOf(SALT_DRIFT, h, ci, week) < DRIFT_SHARE) {
        weight = Math.round(p.baseWeight * (0.8 + 0.4 * unitOf(SALT_DRIFT, h, ci, week, 1)) * 100) / 100;
      }
    }
    return { id: p.id, parentId: p.parentId, name: p.name, logo: p.logo, shortId: p.shortId, weight };
  });
}

/** Every country's provider list, built once (for tests and summaries). */
export function allCatalogProviders(): Map<string, readonly CatalogProvider[]> {
  return new Map(COUNTRIES.map((c) => [c.code, catalogProviders(c.code)]));
}
