/**
 * The OpenAPI 3.0.3 document, generated from the endpoint definitions (endpoints.ts) and the
 * response schemas (schemas.ts): the same definitions validate requests, so it cannot drift.
 */
import { paramSchema, type ParamDef } from './params.ts';
import { schemas, type Schema } from './schemas.ts';
import type { Endpoint } from './types.ts';

/** `/v1/media/:id` -> `/v1/media/{id}`; a wildcard `*path` becomes `{path}` as well. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameter(def: ParamDef): Schema {
  return {
    name: def.name,
    in: def.in,
    required: def.in === 'path' ? true : def.required === true,
    description: def.description,
    schema: paramSchema(def),
    ...(def.example === undefined ? {} : { example: def.type === 'integer' ? Number(def.example) : def.example }),
  };
}

const errorResponse = (description: string, headers?: Record<string, unknown>): Schema => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const allowHeader = { Allow: { description: 'The methods this API answers: `GET, HEAD`.', schema: { type: 'string' } } };
const retryHeader = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

const rateHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const ERROR_TEXT: Record<number, string> = {
  400: 'A required parameter is missing (`missing_parameter`) or malformed (`invalid_parameter`): outside the form, '
    + 'bounds or values its schema declares, or given twice. `details.parameter` names it.',
  401: 'Missing or invalid API key (`unauthorized`); send `Authorization: Bearer <key>` or `X-API-Key: <key>`.',
  403: 'Forbidden (`forbidden`).',
  404: 'Not found (`not_found`), also when a path parameter is not of the form its schema declares.',
  405: 'Method not allowed (`method_not_allowed`): every path answers GET and HEAD only, as `Allow` says.',
  416: 'The `Range` lies outside the file (`invalid_parameter`); `Content-Range` gives the size.',
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
      ...(e.links ? { links: e.links } : {}),
    };
    if (isV1) out['304'] = { description: 'Not modified (the `If-None-Match` ETag matches).' };
  }
  if (e.otherResponse) {
    const r = e.otherResponse;
    const content = r.contentTypes
      ? { content: Object.fromEntries(r.contentTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) }
      : {};
    const headersOf = (h?: Record<string, string>) => (h
      ? { headers: Object.fromEntries(Object.entries(h).map(([name, description]) => [name, { schema: { type: 'string' }, description }])) }
      : {});
    out[String(r.status)] = { description: r.description, ...headersOf(r.headers), ...content };
    for (const more of e.moreResponses ?? []) {
      out[String(more.status)] = { description: more.description, ...headersOf(more.headers), ...(more.withBody ? content : {}) };
    }
  }
  for (const status of errorStatuses(e)) {
    const headers = {
      ...(isV1 ? rateHeaders : {}),
      ...(status === 429 || status === 503 ? retryHeader : {}),
      ...(status === 405 ? allowHeader : {}),
      ...(status === 401 ? { 'WWW-Authenticate': { schema: { type: 'string' }, description: '`Bearer`' } } : {}),
    };
    out[String(status)] = errorResponse(ERROR_TEXT[status] ?? 'Error', Object.keys(headers).length > 0 ? headers : undefined);
  }
  return out;
}

/**
 * The error statuses of an endpoint: its own (`errors`), those its parameters imply (a query
 * parameter can be refused with 400, a path parameter not of its form is 404), 405 everywhere,
 * and under /v1 the key, rate limit and outage answers.
 */
function errorStatuses(e: Endpoint): number[] {
  const statuses = new Set([...e.errors, 405]);
  if (e.params.some((d) => d.in === 'query')) statuses.add(400);
  if (e.params.some((d) => d.in === 'path')) statuses.add(404);
  if (e.path.startsWith('/v1')) for (const s of [401, 429, 500, 503]) statuses.add(s);
  return [...statuses].sort((a, b) => a - b);
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
  // The probes and metrics answer GET and HEAD only, like every other path (405 with `Allow`).
  const method405 = { '405': errorResponse(ERROR_TEXT[405]!, allowHeader) };
  paths['/healthz'] = {
    get: {
      operationId: 'healthz', summary: 'Liveness: 200 while the process runs', tags: ['Operations'], security: [],
      responses: {
        '200': { description: 'Alive', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
        ...method405,
      },
    },
  };
  paths['/readyz'] = {
    get: {
      operationId: 'readyz', summary: 'Readiness: 200 once the read models are built and every critical component runs', tags: ['Operations'], security: [],
      description: 'Also 503 while a server the process needs (`mongodb`, `opensearch`, `kafka`) or a background loop is down; '
        + 'the body names each. `redis` is reported but never makes it 503: the rate limit fails open to per-process counters.',
      responses: {
        '200': { description: 'Ready', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
        ...method405,
        '503': errorResponse('Not ready (`unavailable`): the catalog is still being built, or `details.components` names what is not running.', retryHeader),
      },
    },
  };
  paths['/metrics'] = {
    get: {
      operationId: 'metrics', summary: 'Prometheus metrics', tags: ['Operations'], security: [],
      responses: {
        '200': { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...method405,
      },
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
