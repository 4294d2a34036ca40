/**
 * The 50 countries the sample catalog covers, with their primary language. The API uses
 * COUNTRY_LANGUAGE as the default `lang` of a country (docs/api.md), so every value is one of
 * contracts/domain.ts LOCALES.
 */
import type { Locale } from '../../contracts/domain.ts';

export type Region = 'na' | 'latam' | 'uk' | 'dach' | 'eu_west' | 'eu_south' | 'nordic' | 'eu_east' | 'asia' | 'mena' | 'africa' | 'oceania';

export interface CountryInfo {
  /** ISO 3166-1 alpha-2, upper case. */
  code: string;
  name: string;
  /** Primary language: the default `lang`. */
  language: Locale;
  region: Region;
  /**
   * How large the streaming market is, ~0.6 (small) to 1.4 (US). Scales how many titles and
   * providers the country has.
   */
  market: number;
}

export const COUNTRIES: readonly CountryInfo[] = [
  { code: 'US', name: 'United States', language: 'en', region: 'na', market: 1.4 },
  { code: 'GB', name: 'United Kingdom', language: 'en', region: 'uk', market: 1.25 },
  { code: 'CA', name: 'Canada', language: 'en', region: 'na', market: 1.15 },
  { code: 'AU', name: 'Australia', language: 'en', region: 'oceania', market: 1.1 },
  { code: 'DE', name: 'Germany', language: 'de', region: 'dach', market: 1.2 },
  { code: 'FR', name: 'France', language: 'fr', region: 'eu_west', market: 1.15 },
  { code: 'ES', name: 'Spain', language: 'es', region: 'eu_south', market: 1.1 },
  { code: 'IT', name: 'Italy', language: 'it', region: 'eu_south', market: 1.05 },
  { code: 'NL', name: 'Netherlands', language: 'nl', region: 'eu_west', market: 1.0 },
  { code: 'SE', name: 'Sweden', language: 'sv', region: 'nordic', market: 0.95 },
  { code: 'NO', name: 'Norway', language: 'no', region: 'nordic', market: 0.9 },
  { code: 'DK', name: 'Denmark', language: 'da', region: 'nordic', market: 0.9 },
  { code: 'FI', name: 'Finland', language: 'fi', region: 'nordic', market: 0.85 },
  { code: 'PL', name: 'Poland', language: 'pl', region: 'eu_east', market: 0.95 },
  { code: 'PT', name: 'Portugal', language: 'pt', region: 'eu_south', market: 0.85 },
  { code: 'BR', name: 'Brazil', language: 'pt', region: 'latam', market: 1.1 },
  { code: 'MX', name: 'Mexico', language: 'es', region: 'latam', market: 1.05 },
  { code: 'AR', name: 'Argentina', language: 'es', region: 'latam', market: 0.9 },
  { code: 'CO', name: 'Colombia', language: 'es', region: 'latam', market: 0.85 },
  { code: 'CL', name: 'Chile', language: 'es', region: 'latam', market: 0.8 },
  { code: 'JP', name: 'Japan', language: 'ja', region: 'asia', market: 1.1 },
  { code: 'KR', name: 'South Korea', language: 'ko', region: 'asia', market: 1.0 },
  { code: 'IN', name: 'India', language: 'hi', region: 'asia', market: 1.05 },
  { code: 'ID', name: 'Indonesia', language: 'id', region: 'asia', market: 0.8 },
  { code: 'TH', name: 'Thailand', language: 'th', region: 'asia', market: 0.75 },
  { code: 'PH', name: 'Philippines', language: 'tl', region: 'asia', market: 0.75 },
  { code: 'VN', name: 'Vietnam', language: 'vi', region: 'asia', market: 0.7 },
  { code: 'TR', name: 'Turkey', language: 'tr', region: 'mena', market: 0.85 },
  { code: 'GR', name: 'Greece', language: 'el', region: 'eu_south', market: 0.75 },
  { code: 'CZ', name: 'Czechia', language: 'cs', region: 'eu_east', market: 0.8 },
  { code: 'SK', name: 'Slovakia', language: 'sk', region: 'eu_east', market: 0.7 },
  { code: 'HU', name: 'Hungary', language: 'hu', region: 'eu_east', market: 0.75 },
  { code: 'RO', name: 'Romania', language: 'ro', region: 'eu_east', market: 0.75 },
  { code: 'BG', name: 'Bulgaria', language: 'bg', region: 'eu_east', market: 0.7 },
  { code: 'HR', name: 'Croatia', language: 'hr', region: 'eu_east', market: 0.7 },
  { code: 'SI', name: 'Slovenia', language: 'sl', region: 'eu_east', market: 0.65 },
  { code: 'RS', name: 'Serbia', language: 'sr', region: 'eu_east', market: 0.65 },
  { code: 'UA', name: 'Ukraine', language: 'uk', region: 'eu_east', market: 0.7 },
  { code: 'IL', name: 'Israel', language: 'he', region: 'mena', market: 0.75 },
  { code: 'AE', name: 'United Arab Emirates', language: 'ar', region: 'mena', market: 0.8 },
  { code: 'SA', name: 'Saudi Arabia', language: 'ar', region: 'mena', market: 0.8 },
  { code: 'EG', name: 'Egypt', language: 'ar', region: 'mena', market: 0.7 },
  { code: 'ZA', name: 'South Africa', language: 'en', region: 'africa', market: 0.8 },
  { code: 'NG', name: 'Nigeria', language: 'en', region: 'africa', market: 0.65 },
  { code: 'NZ', name: 'New Zealand', language: 'en', region: 'oceania', market: 0.85 },
  { code: 'IE', name: 'Ireland', language: 'en', region: 'uk', market: 0.85 },
  { code: 'AT', name: 'Austria', language: 'de', region: 'dach', market: 0.85 },
  { code: 'CH', name: 'Switzerland', language: 'de', region: 'dach', market: 0.85 },
  { code: 'BE', name: 'Belgium', language: 'nl', region: 'eu_west', market: 0.85 },
  { code: 'LT', name: 'Lithuania', language: 'lt', region: 'eu_east', market: 0.6 },
];

/** Upper-case country code -> primary language (a LOCALES value). */
export const COUNTRY_LANGUAGE: Record<string, Locale> = Object.fromEntries(COUNTRIES.map((c) => [c.code, c.language]));

export const COUNTRY_CODES: readonly string[] = COUNTRIES.map((c) => c.code);

const byCode = new Map(COUNTRIES.map((c, i) => [c.code, { info: c, index: i }]));

export function countryInfo(code: string): CountryInfo | undefined {
  return byCode.get(code.toUpperCase())?.info;
}

/** Stable position of a country in COUNTRIES (used as a hash key part). */
export function countryIndex(code: string): number {
  return byCode.get(code.toUpperCase())?.index ?? -1;
}

/** Primary language of a country, `en` for one the catalog does not cover. */
export function languageOfCountry(code: string): Locale {
  return COUNTRY_LANGUAGE[code.toUpperCase()] ?? 'en';
}
