/**
 * Declarative request parameters: one definition per parameter both validates and converts a
 * request (params.ts) and becomes the OpenAPI parameter (openapi.ts), so the two cannot drift.
 */
import { LOCALES } from '../../contracts/domain.ts';
import { AppError } from '../../contracts/errors.ts';
import { isIsoDate, MEDIA_ID_PATTERN } from '../../contracts/ids.ts';

/**
 * - `string`: taken as given; `enum`, `pattern` and `maxLength` restrict it;
 * - `integer`: a non-negative decimal integer, clamped to `max` when it has one, otherwise
 *   refused above `maximum` (default the largest integer a JSON client reads exactly);
 * - `country`: two letters in any case, upper-cased;
 * - `lang`: one of LOCALES in any case, lower-cased;
 * - `boolean`: exactly `true` or `false`;
 * - `date`: a real calendar day `YYYY-MM-DD`.
 *
 * An empty value counts as absent only for free text (a `string` without `enum` or `pattern`):
 * a typed parameter given empty (`?period=`, `?limit=`) is refused, as the document says.
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
  /** Form of a `string` parameter: the whole value must match (no flags). */
  pattern?: RegExp;
  /**
   * Longest accepted `string` value, in characters (code points, as JSON Schema counts). Checked
   * first, so an oversized value costs nothing more than its length.
   */
  maxLength?: number;
  /** Most words of a `string`, separated by ASCII white space; published as its `pattern`. */
  maxWords?: number;
  /** Value applied when the parameter is absent. */
  default?: string | number | boolean;
  /** Upper bound of an `integer`: larger values are clamped to it, not refused (docs/api.md). */
  max?: number;
  /** Upper bound of an `integer` without `max`: larger values are refused. */
  maximum?: number;
  /** A valid value, shown in the document (and where schemathesis starts). */
  example?: string;
  description: string;
}

export type ParamValue = string | number | boolean;
export type ParsedParams = Record<string, ParamValue | undefined>;

const COUNTRY = /^[A-Za-z]{2}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `^(?:[aA][rR]|...)$`: JSON Schema patterns have no case-insensitive flag. */
function anyCase(values: readonly string[]): string {
  const letter = (c: string) => (c.toLowerCase() === c.toUpperCase() ? c.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&') : `[${c.toLowerCase()}${c.toUpperCase()}]`);
  return `^(?:${values.map((v) => [...v].map(letter).join('')).join('|')})$`;
}
const LANG = new RegExp(anyCase(LOCALES));

function isFreeText(def: ParamDef): boolean {
  return def.type === 'string' && def.enum === undefined && paramPattern(def) === undefined;
}

/** White space between words of `maxWords`: ASCII only, so JavaScript and Python regexes agree on it. */
const SPACE = '[ \\t\\n\\r]';
const WORD = '[^ \\t\\n\\r]+';
const wordPatterns = new Map<number, RegExp>();

/** The `pattern` of a string parameter: its own, or the one its `maxWords` stands for. */
export function paramPattern(def: ParamDef): RegExp | undefined {
  if (def.pattern !== undefined || def.maxWords === undefined) return def.pattern;
  let re = wordPatterns.get(def.maxWords);
  if (re === undefined) {
    re = new RegExp(`^${SPACE}*${WORD}(?:${SPACE}+${WORD}){0,${def.maxWords - 1}}${SPACE}*$`);
    wordPatterns.set(def.maxWords, re);
  }
  return re;
}

/**
 * Whether `text` has more than `max` characters (code points: JSON Schema's `maxLength` counts
 * those, not UTF-16 units as `.length` does), without walking a text far over the limit.
 */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let points = 0;
  for (const _ of text) if (++points > max) return true;
  return false;
}

function upperBound(def: ParamDef): number {
  return def.maximum ?? Number.MAX_SAFE_INTEGER;
}

function invalid(def: ParamDef, why: string): AppError {
  // A path parameter that is not of its form names no resource: 404, as an unknown id does.
  // The value is not echoed: it may be kilobytes long.
  if (def.in === 'path') {
    return new AppError('not_found', `No resource here: '${def.name}' ${why}.`, { details: { parameter: def.name } });
  }
  return new AppError('invalid_parameter', `Parameter '${def.name}' ${why}.`, {
    details: { parameter: def.name },
  });
}

function convert(def: ParamDef, raw: string): ParamValue {
  switch (def.type) {
    case 'integer': {
      if (!/^\d+$/.test(raw)) throw invalid(def, 'must be a non-negative integer');
      const n = Number(raw);
      if (def.max !== undefined) return n > def.max ? def.max : n;
      if (n > upperBound(def)) throw invalid(def, `must be at most ${upperBound(def)}`);
      return n;
    }
    case 'country':
      if (!COUNTRY.test(raw)) throw invalid(def, 'must be an ISO 3166-1 alpha-2 country code (two letters)');
      return raw.toUpperCase();
    case 'lang':
      // Tested against the ASCII pattern, not lower-cased first: 'K' (Kelvin) lower-cases to 'k'.
      if (!LANG.test(raw)) throw invalid(def, 'must be one of the locales listed by /v1/locales');
      return raw.toLowerCase();
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw invalid(def, "must be 'true' or 'false'");
      return raw === 'true';
    case 'date':
      if (!isIsoDate(raw)) throw invalid(def, 'must be a date in the form YYYY-MM-DD');
      return raw;
    case 'string': {
      if (def.maxLength !== undefined && longerThan(raw, def.maxLength)) {
        throw invalid(def, `must be at most ${def.maxLength} characters long`);
      }
      if (def.enum && !def.enum.includes(raw)) throw invalid(def, `must be one of ${def.enum.join(', ')}`);
      const pattern = paramPattern(def);
      if (pattern && !pattern.test(raw)) {
        throw invalid(def, def.maxWords !== undefined && def.pattern === undefined ? `must have 1 to ${def.maxWords} words` : `must match ${pattern.source}`);
      }
      return raw;
    }
  }
}

/**
 * The JSON Schema of a parameter in the OpenAPI document: exactly what `convert` accepts, so a
 * value the document allows is never refused and one it forbids always is.
 */
export function paramSchema(def: ParamDef): Record<string, unknown> {
  const dflt = def.default === undefined ? {} : { default: def.type === 'boolean' ? String(def.default) : def.default };
  switch (def.type) {
    case 'integer':
      // A clamped parameter has no maximum: larger values are accepted (and clamped).
      return { type: 'integer', minimum: 0, ...(def.max === undefined ? { maximum: upperBound(def) } : {}), ...dflt };
    case 'country':
      return { type: 'string', pattern: COUNTRY.source, ...dflt };
    case 'lang':
      return { type: 'string', pattern: LANG.source, ...dflt };
    case 'boolean':
      return { type: 'string', enum: ['true', 'false'], ...dflt };
    case 'date':
      return { type: 'string', format: 'date', pattern: DATE.source, ...dflt };
    case 'string': {
      const pattern = paramPattern(def);
      if (pattern?.flags) throw new Error(`pattern of ${def.name} has flags, which JSON Schema cannot state`);
      // Free text given empty counts as absent; a required value must not be empty.
      const required = def.in === 'path' || def.required === true;
      return {
        type: 'string',
        ...(required ? { minLength: 1 } : {}),
        ...(def.maxLength !== undefined ? { maxLength: def.maxLength } : {}),
        ...(pattern ? { pattern: pattern.source } : {}),
        ...(def.enum ? { enum: [...def.enum] } : {}),
        ...dflt,
      };
    }
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
    const required = def.required === true || def.in === 'path';
    if (source === undefined || (source === '' && (required || isFreeText(def)))) {
      if (required) {
        throw new AppError('missing_parameter', `Parameter '${def.name}' is required.`, {
          details: { parameter: def.name },
        });
      }
      out[def.name] = def.default;
      continue;
    }
    if (source === '') throw invalid(def, 'must not be empty');
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
  lang: (description: string): ParamDef => ({ name: 'lang', in: 'query', type: 'lang', description: `${description} Any case.` }),
  limit: (def: number, max: number): ParamDef => ({
    name: 'limit', in: 'query', type: 'integer', default: def, max,
    description: `Maximum items per page (default ${def}, maximum ${max}; larger values are clamped to ${max}; 0 returns only \`total\`).`,
  }),
  offset: (): ParamDef => ({
    name: 'offset', in: 'query', type: 'integer', default: 0,
    description: 'Number of items skipped (default 0); past the end the page is empty.',
  }),
  kind: (): ParamDef => ({
    name: 'kind', in: 'query', type: 'string', enum: ['movie', 'tv_show'], description: 'Only titles of this content type.',
  }),
  mediaId: (): ParamDef => ({
    name: 'id', in: 'path', type: 'string', required: true, maxLength: 10, pattern: MEDIA_ID_PATTERN, example: 'mv00001340',
    description: 'Media id: `mv` (movie) or `tv` (TV show) and 8 digits. Any other form: 404.',
  }),
};
