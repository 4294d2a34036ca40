/**
 * Titles built from the vocabulary of words.ts, rendered in English and in each translation
 * language with the articles, genders and word order of that language ("The Silent Harbor",
 * "Der stille Hafen", "Le port silencieux", "静かな港"). Real (vega-datasets) titles are not
 * built from parts; they keep their English title in most languages.
 */
import { ADJECTIVES, NOUNS, PLACES } from './words.ts';
import type { Adjective, Gender, Noun, TranslationLanguage } from './words.ts';

export type TitleParts =
  | { pattern: 'the-adj-noun' | 'adj-noun'; adj: number; noun: number; suffix: string }
  | { pattern: 'the-noun'; noun: number; suffix: string }
  | { pattern: 'noun-of-place'; noun: number; place: number; suffix: string }
  | { pattern: 'place'; place: number; suffix: string };

function noun(i: number): Noun {
  return NOUNS[i % NOUNS.length] as Noun;
}

function adjective(i: number): Adjective {
  return ADJECTIVES[i % ADJECTIVES.length] as Adjective;
}

function place(i: number): string {
  return PLACES[i % PLACES.length] as string;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function renderEnglish(parts: TitleParts): string {
  switch (parts.pattern) {
    case 'the-adj-noun':
      return `The ${adjective(parts.adj).en} ${noun(parts.noun).en}${parts.suffix}`;
    case 'adj-noun':
      return `${adjective(parts.adj).en} ${noun(parts.noun).en}${parts.suffix}`;
    case 'the-noun':
      return `The ${noun(parts.noun).en}${parts.suffix}`;
    case 'noun-of-place':
      return `The ${noun(parts.noun).en} of ${place(parts.place)}${parts.suffix}`;
    case 'place':
      return `${place(parts.place)}${parts.suffix}`;
  }
}

const VOWEL_START = /^[aeiouhâàáéèêíîóôúûœ]/i;

/** Romance definite article, elided before a vowel where the language does. */
function romanceArticle(lang: 'fr' | 'es' | 'it' | 'pt', gender: Gender, next: string): string {
  const vowel = VOWEL_START.test(next);
  switch (lang) {
    case 'fr':
      return vowel ? 'l’' : gender === 'f' ? 'la ' : 'le ';
    case 'it':
      if (vowel && !/^h/i.test(next)) return 'l’';
      if (gender === 'f') return 'la ';
      return /^(s[^aeiou]|z|gn|ps)/i.test(next) ? 'lo ' : 'il ';
    case 'es':
      return gender === 'f' ? 'la ' : 'el ';
    case 'pt':
      return gender === 'f' ? 'a ' : 'o ';
  }
}

function romance(lang: 'fr' | 'es' | 'it' | 'pt', parts: TitleParts): string {
  const of = { fr: 'de', es: 'de', it: 'di', pt: 'de' }[lang];
  switch (parts.pattern) {
    case 'the-adj-noun':
    case 'adj-noun': {
      const n = noun(parts.noun)[lang];
      const a = adjective(parts.adj);
      const form = a[lang][n.gender === 'f' ? 1 : 0];
      const phrase = a.pre ? `${form} ${n.word}` : `${n.word} ${form}`;
      const article = parts.pattern === 'the-adj-noun' ? romanceArticle(lang, n.gender, phrase) : '';
      return capitalise(`${article}${phrase}`);
    }
    case 'the-noun': {
      const n = noun(parts.noun)[lang];
      return capitalise(`${romanceArticle(lang, n.gender, n.word)}${n.word}`);
    }
    case 'noun-of-place': {
      const n = noun(parts.noun)[lang];
      const p = place(parts.place);
      const link = (lang === 'fr' || lang === 'it') && VOWEL_START.test(p) ? `d’${p}` : `${of} ${p}`;
      return capitalise(`${romanceArticle(lang, n.gender, n.word)}${n.word} ${link}`);
    }
    case 'place':
      return place(parts.place);
  }
}

function german(parts: TitleParts): string {
  const articles: Record<Gender, string> = { m: 'Der', f: 'Die', n: 'Das' };
  const strong: Record<Gender, string> = { m: 'er', f: 'e', n: 'es' };
  switch (parts.pattern) {
    case 'the-adj-noun': {
      const n = noun(parts.noun).de;
      return `${articles[n.gender]} ${adjective(parts.adj).deStem}e ${n.word}`;
    }
    case 'adj-noun': {
      const n = noun(parts.noun).de;
      return capitalise(`${adjective(parts.adj).deStem}${strong[n.gender]} ${n.word}`);
    }
    case 'the-noun': {
      const n = noun(parts.noun).de;
      return `${articles[n.gender]} ${n.word}`;
    }
    case 'noun-of-place': {
      const n = noun(parts.noun).de;
      return `${articles[n.gender]} ${n.word} von ${place(parts.place)}`;
    }
    case 'place':
      return place(parts.place);
  }
}

function dutch(parts: TitleParts): string {
  switch (parts.pattern) {
    case 'the-adj-noun': {
      const n = noun(parts.noun).nl;
      return capitalise(`${n.article} ${adjective(parts.adj).nl} ${n.word}`);
    }
    case 'adj-noun':
      return capitalise(`${adjective(parts.adj).nl} ${noun(parts.noun).nl.word}`);
    case 'the-noun': {
      const n = noun(parts.noun).nl;
      return capitalise(`${n.article} ${n.word}`);
    }
    case 'noun-of-place': {
      const n = noun(parts.noun).nl;
      return capitalise(`${n.article} ${n.word} van ${place(parts.place)}`);
    }
    case 'place':
      return place(parts.place);
  }
}

function eastAsian(lang: 'ja' | 'ko', parts: TitleParts): string {
  const join = lang === 'ja' ? '' : ' ';
  switch (parts.pattern) {
    case 'the-adj-noun':
    case 'adj-noun':
      return `${adjective(parts.adj)[lang]}${join}${noun(parts.noun)[lang]}`;
    case 'the-noun':
      return noun(parts.noun)[lang];
    case 'noun-of-place':
      return lang === 'ja' ? `${place(parts.place)}の${noun(parts.noun).ja}` : `${place(parts.place)}의 ${noun(parts.noun).ko}`;
    case 'place':
      return place(parts.place);
  }
}

/** A generated title in one translation language (sequel numbers and the like kept as they are). */
export function renderTitle(parts: TitleParts, lang: TranslationLanguage): string {
  let base: string;
  switch (lang) {
    case 'de':
      base = german(parts);
      break;
    case 'nl':
      base = dutch(parts);
      break;
    case 'ja':
    case 'ko':
      base = eastAsian(lang, parts);
      break;
    default:
      base = romance(lang, parts);
  }
  return `${base}${parts.suffix}`;
}

/**
 * Templates split at their placeholders: literal, name, literal, ..., literal. The crawler fills
 * a handful of templates for every title in every language, and a regular expression with a
 * callback per fill was a tenth of a crawl's generation time. Bounded, as any text may be a
 * template.
 */
const templates = new Map<string, string[]>();
const TEMPLATE_LIMIT = 1000;

/** A code unit `\w` matches: ASCII letters, digits and `_`. */
function isWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** `template` split as `/\{(\w+)\}/g` would find its placeholders. */
export function templateParts(template: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < template.length; i++) {
    if (template.charCodeAt(i) !== 123 /* { */) continue;
    let end = i + 1;
    while (end < template.length && isWordCode(template.charCodeAt(end))) end++;
    if (end === i + 1 || template.charCodeAt(end) !== 125 /* } */) continue;
    parts.push(template.slice(from, i), template.slice(i + 1, end));
    from = end + 1;
    i = end;
  }
  parts.push(template.slice(from));
  return parts;
}

/** Fills `{name}` placeholders (`\w` names; one without a value is left as it is). */
export function fill(template: string, values: Record<string, string | number>): string {
  let parts = templates.get(template);
  if (parts === undefined) {
    if (templates.size >= TEMPLATE_LIMIT) templates.clear();
    parts = templateParts(template);
    templates.set(template, parts);
  }
  let out = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i] as string;
    out += key in values ? String(values[key]) : `{${key}}`;
    out += parts[i + 1] as string;
  }
  return out;
}
