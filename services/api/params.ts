/**
 * Declarative request parameters: one definition per parameter both validates and converts a
 * request (params.ts) and becomes the OpenAPI parameter (openapi.ts), so the two cannot drift.
 */
import { LOCALES } from '../../contracts/domain.ts';
import { AppError } from '../../contracts/errors.ts';
import { MEDIA_ID_PATTERN, isIsoDate } from '../../contracts/ids.ts';

/**
 * - `string`: taken as given (an empty value counts as absent);
 * - `integer`: a non-negative decimal integer, clamped to `max` when it has one;
 * - `country`: two letters in any case, upper-cased;
 * - `lang`: one of LOCALES (any case), lower-cased;
 * - `boolean`: exactly `true` or `false`;
 * - `date`: a real calendar day `YYYY-MM-DD`.
 */
export type ParamType = 'string' | 'integer' | 'country' | 'lang' | 'boolean' | 'date';

export interface ParamDef {
  name: string;
  in: 'query' | 'path';
  type: ParamType;
  /** Default false; path parameters are always required. */
  required?: boolean;
  /** Allowed values of a `string` parameter. */
  enum?: readonly string[];
  /** Value applied when the parameter is absent. */
  default?: string | number | boolean;
  /** Upper bound of an `integer`: larger values are clamped to it, not refused (decisions.md). */
  max?: number;
  /**
   * Most characters (Unicode code points, as OpenAPI's `maxLength` counts) of a `string`. Checked
   * first, so an oversized value costs nothing more than its length.
   */
  maxLength?: number;
  /** Most words of a `string`, separated by spaces, tabs or line breaks; published as its `pattern`. */
  maxWords?: number;
  /** Anchored regular expression a `string` must match, in the syntax JavaScript and OpenAPI tools share. */
  pattern?: string;
  description: string;
}

export type ParamValue = string | number | boolean;
export type ParsedParams = Record<string, ParamValue | undefined>;

function invalid(def: ParamDef, why: string): AppError {
  return new AppError('invalid_parameter', `Parameter '${def.name}' ${why}.`, {
    details: { parameter: def.name },
  });
}

/**
 * A path names a resource: a malformed id or slug names none, so it is a 404 like an unknown
 * one (never a 500 from a store that choked on it). The value is not echoed: it may be huge.
 */
function refused(def: ParamDef, why: string): AppError {
  if (def.in === 'query') return invalid(def, why);
  return new AppError('not_found', `Nothing has this ${def.name}: it ${why}.`, { details: { parameter: def.name } });
}

/** White space between words of `maxWords`: ASCII only, so JavaScript and Python regexes agree on it. */
const SPACE = '[ \\t\\n\\r]';
const WORD = '[^ \\t\\n\\r]+';

/** The `pattern` of a string parameter: its own, or the one its `maxWords` stands for. */
export function paramPattern(def: ParamDef): string | undefined {
  if (def.pattern !== undefined) return def.pattern;
  if (def.maxWords !== undefined) return `^${SPACE}*${WORD}(?:${SPACE}+${WORD}){0,${def.maxWords - 1}}${SPACE}*$`;
  return undefined;
}

const compiled = new Map<string, RegExp>();
function regex(source: string): RegExp {
  let re = compiled.get(source);
  if (re === undefined) {
    re = new RegExp(source);
    compiled.set(source, re);
  }
  return re;
}

/** Whether `text` has more than `max` code points, without splitting a long text into an array. */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let points = 0;
  for (const _ of text) if (++points > max) return true;
  return false;
}

function checkString(def: ParamDef, raw: string): string {
  if (def.maxLength !== undefined && longerThan(raw, def.maxLength)) throw refused(def, `must be at most ${def.maxLength} characters long`);
  const pattern = paramPattern(def);
  if (pattern !== undefined && !regex(pattern).test(raw)) {
    throw refused(def, def.maxWords !== undefined ? `must have 1 to ${def.maxWords} words` : `must match ${pattern}`);
  }
  if (def.enum && !def.enum.includes(raw)) throw refused(def, `must be one of ${def.enum.join(', ')}`);
  return raw;
}

function convert(def: ParamDef, raw: string): ParamValue {
  switch (def.type) {
    case 'integer': {
      if (!/^\d{1,9}$/.test(raw)) throw invalid(def, 'must be a non-negative integer');
      const n = Number(raw);
      return def.max !== undefined && n > def.max ? def.max : n;
    }
    case 'country':
      if (!/^[A-Za-z]{2}$/.test(raw)) throw invalid(def, 'must be an ISO 3166-1 alpha-2 country code (two letters)');
      return raw.toUpperCase();
    case 'lang': {
      const lang = raw.toLowerCase();
      if (!(LOCALES as readonly string[]).includes(lang)) throw invalid(def, 'must be one of the locales listed by /v1/locales');
      return lang;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw invalid(def, "must be 'true' or 'false'");
      return raw === 'true';
    case 'date':
      if (!isIsoDate(raw)) throw invalid(def, 'must be a date in the form YYYY-MM-DD');
      return raw;
    case 'string':
      return checkString(def, raw);
  }
}

/**
 * Validates and converts the parameters of one request. `query` values may be arrays when a
 * parameter was repeated; a repeated parameter is refused rather than silently picking one.
 */
export function parseParams(
  defs: readonly ParamDef[],
  query: Record<string, string | string[] | undefined>,
  path: Record<string, string | undefined>,
): ParsedParams {
  const out: ParsedParams = {};
  for (const def of defs) {
    const source = def.in === 'path' ? path[def.name] : query[def.name];
    if (Array.isArray(source)) throw invalid(def, 'must be given only once');
    if (source === undefined || source === '') {
      if (def.required || def.in === 'path') {
        throw new AppError('missing_parameter', `Parameter '${def.name}' is required.`, {
          details: { parameter: def.name },
        });
      }
      out[def.name] = def.default;
      continue;
    }
    out[def.name] = convert(def, source);
  }
  return out;
}

/** Typed accessors for handlers, so a definition/handler mismatch fails loudly in tests. */
export function str(p: ParsedParams, name: string): string | undefined {
  const v = p[name];
  if (v !== undefined && typeof v !== 'string') throw new TypeError(`parameter ${name} is not a string`);
  return v;
}
export function reqStr(p: ParsedParams, name: string): string {
  const v = str(p, name);
  if (v === undefined) throw new TypeError(`parameter ${name} is missing`);
  return v;
}
export function int(p: ParsedParams, name: string): number {
  const v = p[name];
  if (typeof v !== 'number') throw new TypeError(`parameter ${name} is not an integer`);
  return v;
}
export function bool(p: ParsedParams, name: string): boolean {
  const v = p[name];
  if (typeof v !== 'boolean') throw new TypeError(`parameter ${name} is not a boolean`);
  return v;
}

// Shared definitions, reused by several endpoints.
export const p = {
  country: (description = 'ISO 3166-1 alpha-2 country code, any case.'): ParamDef =>
    ({ name: 'country', in: 'query', type: 'country', required: true, description }),
  lang: (description: string): ParamDef => ({ name: 'lang', in: 'query', type: 'lang', description }),
  limit: (def: number, max: number): ParamDef => ({
    name: 'limit', in: 'query', type: 'integer', default: def, max,
    description: `Maximum items per page (default ${def}, maximum ${max}; larger values are clamped to ${max}; 0 returns only \`total\`).`,
  }),
  offset: (): ParamDef => ({
    name: 'offset', in: 'query', type: 'integer', default: 0, description: 'Number of items skipped (default 0).',
  }),
  kind: (): ParamDef => ({
    name: 'kind', in: 'query', type: 'string', enum: ['movie', 'tv_show'], description: 'Only titles of this content type.',
  }),
  mediaId: (): ParamDef => ({
    name: 'id', in: 'path', type: 'string', required: true, maxLength: 10, pattern: MEDIA_ID_PATTERN.source,
    description: 'Media id: `mv` (movie) or `tv` (TV show) and 8 digits, e.g. `mv00012345`.',
  }),
};
