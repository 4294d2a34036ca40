/** The default search language of a country: its primary language when it has a search index, else English. */
import { LOCALES } from '../../contracts/domain.ts';
import { COUNTRY_LANGUAGE } from '../crawler/countries.ts';

export function defaultLanguageOf(country: string): string {
  const lang = COUNTRY_LANGUAGE[country.toUpperCase()];
  return lang !== undefined && (LOCALES as readonly string[]).includes(lang) ? lang : 'en';
}
