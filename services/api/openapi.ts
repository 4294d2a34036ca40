/**
 * The OpenAPI 3.0.3 document, generated from the endpoint definitions (endpoints.ts) and the
 * response schemas (schemas.ts): the same definitions validate requests, so it cannot drift.
 */
import { paramPattern, type ParamDef } from './params.ts';
import { schemas, type Schema } from './schemas.ts';
import type { Endpoint } from './types.ts';

/** `/v1/media/:id` -> `/v1/media/{id}`; a wildcard `*path` becomes `{path}` as well. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function paramSchema(def: ParamDef): Schema {
  switch (def.type) {
    case 'integer':
      return { type: 'integer', minimum: 0, ...(def.default !== undefined ? { default: def.default } : {}) };
    case 'country':
      return { type: 'string', pattern: '^[A-Za-z]{2}$', ...(def.default !== undefined ? { default: def.default } : {}) };
    case 'lang':
      return { $ref: '#/components/schemas/Locale' };
    case 'boolean':
      return { type: 'string', enum: ['true', 'false'], ...(def.default !== undefined ? { default: String(def.default) } : {}) };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'string': {
      const pattern = paramPattern(def);
      return {
        type: 'string',
        ...(def.maxLength !== undefined ? { maxLength: def.maxLength } : {}),
        ...(pattern !== undefined ? { pattern } : {}),
        ...(def.enum ? { enum: [...def.enum] } : {}),
        ...(def.default !== undefined ? { default: def.default } : {}),
      };
    }
  }
}

function parameter(def: ParamDef): Schema {
  return {
    name: def.name,
    in: def.in,
    required: def.in === 'path' ? true : def.required === true,
    description: def.description,
    schema: paramSchema(def),
  };
}

const errorResponse = (description: string, headers?: Record<string, unknown>): Schema => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const rateHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const ERROR_TEXT: Record<number, string> = {
  400: 'A required parameter is missing (`missing_parameter`) or malformed (`invalid_parameter`); `details.parameter` names it.',
  401: 'Missing or invalid API key (`unauthorized`); send `Authorization: Bearer <key>` or `X-API-Key: <key>`.',
  403: 'Forbidden (`forbidden`).',
  404: 'Not found (`not_found`).',
  405: 'Method not allowed; only GET and HEAD (`method_not_allowed`).',
  429: 'Over the rate limit (`rate_limited`); retry after `Retry-After` seconds.',
  500: 'Internal error (`internal`).',
  503: 'A dependency is unavailable or the catalog is not built yet (`unavailable`); answered within 2 s, retry after `Retry-After` seconds.',
};

function responses(e: Endpoint): Schema {
  const out: Record<string, Schema> = {};
  const isV1 = e.path.startsWith('/v1');
  const headers = isV1 ? { ...rateHeaders, ETag: { $ref: '#/components/headers/ETag' } } : undefined;
  if (e.response) {
    out['200'] = {
      description: 'OK',
      ...(headers ? { headers } : {}),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${e.response}` } } },
    };
    if (isV1) out['304'] = { description: 'Not modified (the `If-None-Match` ETag matches).' };
  }
  if (e.otherResponse) {
    const r = e.otherResponse;
    out[String(r.status)] = {
      description: r.description,
      ...(r.status === 302 ? { headers: { Location: { schema: { type: 'string' }, description: 'The deep link.' } } } : {}),
      ...(r.contentType ? { content: { [r.contentType]: { schema: { type: 'string', format: 'binary' } } } } : {}),
    };
  }
  const statuses = new Set(e.errors);
  if (isV1) for (const s of [401, 405, 429, 500, 503]) statuses.add(s);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    out[String(status)] = status === 429
      ? errorResponse(ERROR_TEXT[429]!, { 'Retry-After': { $ref: '#/components/headers/Retry-After' }, ...rateHeaders })
      : status === 401
        ? errorResponse(ERROR_TEXT[401]!, { 'WWW-Authenticate': { schema: { type: 'string' }, description: '`Bearer`' } })
        : errorResponse(ERROR_TEXT[status] ?? 'Error', isV1 ? rateHeaders : undefined);
  }
  return out;
}

function security(e: Endpoint): Schema[] {
  if (e.auth === 'none') return [];
  const keyed = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
  return e.auth === 'optional' ? [{}, ...keyed] : keyed;
}

export interface OpenApiInfo {
  version: string;
  /** Server URL; default relative `/`. */
  serverUrl?: string;
}

export function buildOpenApi(list: readonly Endpoint[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of list) {
    paths[openApiPath(e.path)] = {
      get: {
        operationId: e.operationId,
        summary: e.summary,
        ...(e.description ? { description: e.description } : {}),
        tags: [e.tag],
        parameters: e.params.map(parameter),
        security: security(e),
        responses: responses(e),
      },
    };
  }
  paths['/healthz'] = {
    get: {
      operationId: 'healthz', summary: 'Liveness: 200 while the process runs', tags: ['Operations'], security: [],
      responses: { '200': { description: 'Alive', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } } },
    },
  };
  paths['/readyz'] = {
    get: {
      operationId: 'readyz', summary: 'Readiness: 200 once the read models are built', tags: ['Operations'], security: [],
      description: 'Also 503 while a server the process needs (`mongodb`, `opensearch`, `kafka`) or a background loop is down; '
        + 'the body names each. `redis` is reported but never makes it 503: the rate limit fails open to per-process counters.',
      responses: {
        '200': { description: 'Ready', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
        '503': errorResponse('Not ready yet, or a dependency is down (`unavailable`); the message names what.'),
      },
    },
  };
  paths['/metrics'] = {
    get: {
      operationId: 'metrics', summary: 'Prometheus metrics', tags: ['Operations'], security: [],
      responses: { '200': { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  };

  return {
    openapi: '3.0.3',
    info: {
      title: 'Marquee streaming availability API',
      version: info.version,
      description:
        'Read-only catalog of movies and TV shows with streaming availability per country. '
        + 'Every /v1 endpoint needs an API key (`Authorization: Bearer mk_live_...` or `X-API-Key`), except `GET /v1/snapshots`. '
        + 'Errors are `{"error", "code", "details"?}`. Country codes are accepted in any case. '
        + '`limit` above an endpoint maximum is clamped; `limit=0` returns only `total`. '
        + 'Rate limit: per API key (per address without a key), reported in `RateLimit-*` headers. '
        + 'Counters are shared by all API processes through Redis; while Redis is down the limit fails open to '
        + 'per-process counters (the limit still applies, per process) rather than refusing requests.',
      license: { name: 'Snapshot data: open data license, free for personal, research and non-commercial use' },
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    tags: [...new Set([...list.map((e) => e.tag), 'Operations'])].map((name) => ({ name })),
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key `mk_live_` + 32 lowercase hex characters.' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      headers: {
        'RateLimit-Limit': { description: 'Requests allowed per window.', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
        ETag: { description: 'Hash of the body; send it back in `If-None-Match` for a 304.', schema: { type: 'string' } },
      },
      schemas: {
        ...schemas,
        Locale: { type: 'string', enum: (schemas.Locales as { properties: { locales: { items: { enum: string[] } } } }).properties.locales.items.enum },
        OpenApiDocument: { type: 'object', additionalProperties: true, description: 'This document.' },
      },
    },
  };
}
