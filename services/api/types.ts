/** The dependencies of the API and the shape of one endpoint definition. */
import type Koa from 'koa';
import type { Platform } from '../../contracts/domain.ts';
import type { ApiKeyStore, Clock, EventStore, ReadStore, SearchIndex } from '../../contracts/ports.ts';
import type { Dependency } from '../shared/dependencies.ts';
import type { Health } from '../shared/health.ts';
import type { Catalog } from './catalog.ts';
import type { ResponseCacheOptions } from './responseCache.ts';
import type { ParamDef, ParsedParams } from './params.ts';

/** What the API needs of the link-token codec (services/links/linkTokens.ts). */
export interface LinkTokenCodec {
  encode(url: string): string;
  /** The URL, or null when the token does not decrypt under any configured key. */
  decode(token: string): string | null;
  deepLink(url: string, platform: Platform): string;
}

/** Minimal logger (pino-compatible). */
export interface ApiLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Snapshot endpoints, supplied by the snapshot service. Until they are, `/v1/snapshots`,
 * `/v1/schemas`, `/v1/snapshots/download` and `/v1/snapshots/file/...` answer 503.
 * Each returns the response body (or, for `file`, writes the response on `ctx` itself) and
 * throws AppError (`not_found`, `forbidden`, `unavailable`, ...) for the documented errors.
 */
export interface SnapshotRoutes {
  listing(ctx: Koa.Context): Promise<unknown>;
  schemas(ctx: Koa.Context): Promise<unknown>;
  download(params: { path: string; version: string | undefined }, ctx: Koa.Context): Promise<unknown>;
  file(params: { version: string; path: string }, ctx: Koa.Context): Promise<void>;
}

export interface RateLimitOptions {
  /** Requests per minute per API key (per address when keyless). Default RATE_LIMIT_PER_MINUTE, else 60. */
  perMinute?: number;
  /** Shares the counters between API processes; in memory (bounded) when absent. */
  redis?: unknown;
  /** Redis's breaker: while Redis is down the limit fails open to per-process counters (rateLimit.ts). */
  redisDependency?: Dependency;
  /** Window length in ms. Default 60000. */
  windowMs?: number;
  /**
   * `/go` redirects per minute per client address, counted apart from /v1. Default
   * GO_RATE_LIMIT_PER_MINUTE, else 120.
   */
  goPerMinute?: number;
}

export interface ApiDeps {
  readStore: ReadStore;
  /** Where API keys are looked up (and their last use recorded). */
  apiKeys: ApiKeyStore;
  search: SearchIndex;
  linkTokens: LinkTokenCodec;
  clock: Clock;
  /** For `links?at=`; without it such a request answers 503. */
  eventStore?: EventStore;
  snapshots?: SnapshotRoutes;
  rateLimit?: RateLimitOptions;
  logger?: ApiLogger;
  /** Base URL clients prefix to poster/backdrop paths. Default `https://images.marquee.example`. */
  imageBase?: string;
  /** Reported in the OpenAPI document. Default the package version `0.1.0`. */
  version?: string;
  /** /readyz answers 200 only once this returns true; /v1 data endpoints answer 503 until then. Default always ready. */
  ready?: () => boolean | Promise<boolean>;
  /** Background loops and dependencies of the process: /readyz is 503 while a critical one is not running, /metrics exports their states. */
  health?: Health;
  /** How long an API key lookup is reused, in ms (at most 1000 so a revocation bites at once). Default 1000. */
  keyCacheMs?: number;
  /**
   * Proxies (load balancers) in front of the API, each appending the address it was called from
   * to X-Forwarded-For: the client address of keyless calls and of /go is the one the farthest of
   * them saw, the header's `trustedProxies`-th entry from the right. Entries left of it are the
   * client's own words. Default 0: the header is ignored, the address is the socket's peer.
   */
  trustedProxies?: number;
  /** Projection version per read model when no alias exists. Default: the versions in projections/. */
  modelVersions?: Record<string, number>;
  /** Rendered answers kept per read-model state (responseCache.ts): its bounds, or false for none. Default on. */
  responseCache?: ResponseCacheOptions | false;
}

export interface HandlerInput {
  params: ParsedParams;
  deps: ApiDeps;
  catalog: Catalog;
  ctx: Koa.Context;
  imageBase: string;
}

export interface Endpoint {
  /** Koa path, `:name` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  params: ParamDef[];
  /** Component schema of the JSON 200 body. */
  response?: string;
  /** The success response of an endpoint that does not answer JSON 200 (redirect, file, text). */
  otherResponse?: { status: number; description: string; contentTypes?: string[]; headers?: Record<string, string> };
  /** Further non-error answers (a partial file, not modified), with the body of `otherResponse`. */
  moreResponses?: Array<{ status: number; description: string; headers?: Record<string, string>; withBody: boolean }>;
  /**
   * OpenAPI links of the 200 answer: operations a client can call next with values from this
   * answer (runtime expressions such as `$response.body#/results/0/id`). They document how the
   * API is walked, and let a tool that follows links (schemathesis's stateful phase) reach
   * titles, seasons and collections that exist instead of guessing ids.
   */
  links?: Record<string, { operationId: string; parameters: Record<string, string>; description: string }>;
  /** Documented error statuses; every /v1 endpoint also has 401, 429, 500 and 503. */
  errors: number[];
  /** `required` (default for /v1), `optional` (GET /v1/snapshots) or `none`. */
  auth: 'required' | 'optional' | 'none';
  /** Reads the catalog: answers 503 until the read models are ready. */
  needsCatalog: boolean;
  /**
   * The answer is made of its parameters, catalog documents and what `stateOf` names (no clock,
   * no event store), so it may be kept per read-model state (responseCache.ts); a function
   * decides per request.
   */
  cacheable?: boolean | ((params: ParsedParams) => boolean);
  /**
   * The state besides the read models that answers read, as a value that changes whenever it
   * does (the search index's generation), or undefined when this process cannot know it (a
   * shared index): answers are then not kept. Absent: parameters and read models are all.
   */
  stateOf?(deps: ApiDeps): string | undefined;
  /**
   * A number field, last in the JSON body, that reports the time the request took (search's
   * `processing_time_ms`): a kept answer reports the time of each request it answers.
   */
  timeField?: string;
  /**
   * The hot path (hotPath.ts) may answer it without Koa when no answer is kept for the URL: its
   * handler never reads `ctx` and always returns a JSON body, and `auth` is `required`. For
   * endpoints whose new answers are common (search: most queries are new), where Koa's own
   * work per request would cost as much as the answer.
   */
  lean?: boolean;
  /** Returns the JSON body, or undefined when it wrote the response on ctx itself. */
  handler(input: HandlerInput): Promise<unknown>;
}
