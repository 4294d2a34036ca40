/**
 * Configuration from the environment, read once in each process's `main`. Every other module
 * receives what it needs as arguments. Unset server URLs select the embedded default.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { isIsoDate } from '../../contracts/ids.ts';
import { AppError } from '../../contracts/errors.ts';

export interface Config {
  /** API port. `PORT`, default 8080. */
  port: number;
  /**
   * Processes serving the API (services/cli/apiWorkers.ts). `API_WORKERS`, default 1 (the API in the
   * one `start` process); `auto` = the number of cores. Not cores by default: on 2 cores a second
   * worker measured slower than one (docs/operations.md, `npm run bench -- api`).
   */
  apiWorkers: number;
  /** Set by `start` in the API workers it forks (`MARQUEE_API_WORKER=1`), never by hand. */
  isApiWorker: boolean;
  /**
   * Interface the API listens on. `HOST`, default `127.0.0.1`: a sample server started on a
   * laptop must not answer the whole network; set `0.0.0.0` behind a load balancer or in a container.
   */
  host: string;
  /**
   * Port of this process's ops server (`/healthz`, `/readyz`, `/metrics`, on `HOST`), for the
   * processes that serve no API: `OPS_PORT`, default none (a process with the API role answers
   * them on `PORT`). Several processes on one host need one port each.
   */
  opsPort: number | null;
  /** The roles this process runs (`marquee start --roles`); the CLI sets it, the environment does not. Default all. */
  roles: Role[];
  /** Where the embedded engines keep their files. `DATA_DIR`, default `./data`. */
  dataDir: string;
  /** Comma-separated Kafka brokers; unset = the local inbox. `KAFKA_BROKERS`. */
  kafkaBrokers: string[] | null;
  /** Prefix of the Kafka topics. `KAFKA_TOPIC_PREFIX`, default `marquee.`. */
  kafkaTopicPrefix: string;
  /**
   * Consumer group of the ingest role; processes in one group share the work. `INGEST_GROUP`,
   * default the topic prefix + `ingest` (`marquee.ingest`): two deployments sharing a Kafka
   * cluster under different prefixes must not share a group, or each one's starts and stops
   * rebalance the other's consumers.
   */
  ingestGroup: string;
  /** EventStoreDB connection string; unset = LMDB. `EVENTSTORE_URL`. */
  eventStoreUrl: string | null;
  /**
   * Engine of the event log. `EVENT_STORE` = `lmdb` | `kafka` | `eventstoredb`; unset =
   * `eventstoredb` when `EVENTSTORE_URL` is set, else `lmdb`. `kafka` needs `KAFKA_BROKERS` and
   * keeps the log in `<KAFKA_TOPIC_PREFIX>events`.
   */
  eventStore: EventStoreEngine;
  /** MongoDB URL; unset = LMDB read models. `MONGODB_URL`. */
  mongodbUrl: string | null;
  /** MongoDB database name. `MONGODB_DB`, default `marquee`. */
  mongodbDb: string;
  /** OpenSearch URL; unset = the in-process index. `OPENSEARCH_URL`. */
  opensearchUrl: string | null;
  /** Redis URL for shared rate-limit counters; unset = in memory. `REDIS_URL`. */
  redisUrl: string | null;
  /** Requests per minute per key. `RATE_LIMIT_PER_MINUTE`, default 60. */
  rateLimitPerMinute: number;
  /** `/go` redirects per minute per client address. `GO_RATE_LIMIT_PER_MINUTE`, default 120. */
  goRateLimitPerMinute: number;
  /** Proxies in front of the API that append to X-Forwarded-For. `TRUSTED_PROXIES`, default 0 (the header is ignored). */
  trustedProxies: number;
  /** `LINK_TOKEN_KEYS` = `1:<64 hex>,2:<64 hex>`; required unless `--sample` (then unset = the development key). */
  linkTokenKeys: string | null;
  /** Secret for signed download URLs. `DOWNLOAD_SIGNING_KEY`; required unless `--sample` (then unset = a random key kept in the data dir). */
  downloadSigningKey: string | null;
  /** Base URL clients prefix to image path templates. `IMAGE_BASE`. */
  imageBase: string;
  /** Public base URL of this API, for download URLs. `PUBLIC_BASE_URL`, default `http://localhost:<port>`. */
  publicBaseUrl: string;
  /** Prefix of the OpenSearch index. `OPENSEARCH_INDEX_PREFIX`, default `marquee-search`. */
  opensearchIndexPrefix: string;
  /** pino level. `LOG_LEVEL`, default `info`. */
  logLevel: string;
  /** `LOG_FORMAT=json` forces JSON lines on a terminal too. Default: pretty on a terminal. */
  logJson: boolean;
  /** First day of the sample week (`YYYY-MM-DD`). `SAMPLE_START_DATE`; unset = `SAMPLE_DAYS` days before today. */
  sampleStartDate: string | null;
  /** How long `marquee replay` waits before dropping the old collection, in ms. `REPLAY_DROP_GRACE_MS`, default 3000. */
  replayDropGraceMs: number;
  /** Seed of the sample catalog. `SAMPLE_SEED`, default 42. */
  sampleSeed: number;
  /** Days of simulated crawls loaded on first start. `SAMPLE_DAYS`, default 7. */
  sampleDays: number;
  /** A synthetic sample of N titles instead of the real 4,001. `SAMPLE_TITLES`; unset = the real sample. */
  sampleTitles: number | null;
  /** Only these countries in the sample. `SAMPLE_COUNTRIES` (comma-separated); unset = all 50. */
  sampleCountries: string[] | null;
  /** Releases kept. `RELEASES_KEEP`, default 8. */
  releasesKeep: number;
  /**
   * Where releases live: S3-compatible object storage when `RELEASES_S3_URL` is set (every API
   * process then serves every release), else `$DATA_DIR/releases`. Path-style addressing.
   */
  releasesS3: {
    /** Endpoint of the S3 API. `RELEASES_S3_URL` (`https://s3.amazonaws.com` for AWS itself). */
    url: string;
    /** `RELEASES_S3_BUCKET`, default `marquee-releases`. */
    bucket: string;
    /** Key prefix inside the bucket. `RELEASES_S3_PREFIX`, default none. */
    prefix: string;
    /** `RELEASES_S3_REGION`, default `us-east-1`. */
    region: string;
    /** `RELEASES_S3_ACCESS_KEY` / `RELEASES_S3_SECRET_KEY`; unset = the AWS SDK's default credential chain. */
    accessKeyId: string | null;
    secretAccessKey: string | null;
  } | null;
  /** How far ahead of the clock an observation's `observedAt` may be before it is dead-lettered, in hours. `INGEST_MAX_FUTURE_SKEW_HOURS`, default 24. */
  ingestMaxFutureSkewHours: number;
  /** How long the local inbox keeps handled observations and dead letters, in hours. `INBOX_RETENTION_HOURS`, default 168 (7 days, Kafka's default). */
  inboxRetentionHours: number;
}

export type EventStoreEngine = 'lmdb' | 'kafka' | 'eventstoredb';

/** `EVENT_STORE`, checked against the servers it needs. */
function eventStoreEngine(value: string | undefined, brokers: string | null, eventStoreUrl: string | null): EventStoreEngine {
  const engine = value === undefined || value.trim() === '' ? (eventStoreUrl ? 'eventstoredb' : 'lmdb') : value.trim();
  if (engine !== 'lmdb' && engine !== 'kafka' && engine !== 'eventstoredb') {
    throw configError(`EVENT_STORE must be lmdb, kafka or eventstoredb, got "${value}"`);
  }
  if (engine === 'kafka' && brokers === null) throw configError('EVENT_STORE=kafka needs KAFKA_BROKERS');
  if (engine === 'eventstoredb' && eventStoreUrl === null) throw configError('EVENT_STORE=eventstoredb needs EVENTSTORE_URL');
  return engine;
}

/** What a `marquee start` process runs; several processes of each role may share the servers. */
export const ROLES = ['api', 'ingest', 'projector', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

/** `--roles api,projector` -> the roles, refusing an unknown one; empty or unset = all. */
export function parseRoles(value: string | undefined): Role[] {
  if (value === undefined || value.trim() === '') return [...ROLES];
  const roles = value.split(',').map((r) => r.trim()).filter(Boolean);
  for (const role of roles) {
    if (!(ROLES as readonly string[]).includes(role)) throw new AppError('invalid_parameter', `--roles takes ${ROLES.join(',')}; got "${role}"`);
  }
  return [...new Set(roles)] as Role[];
}

/**
 * A setting that cannot be used: refused at start, said in one line naming the variable
 * (main.ts prints an AppError's message, not a stack).
 */
function configError(message: string): AppError {
  return new AppError('invalid_parameter', message);
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  // A safe integer: 99999999999999999999 reads as 1e20, an integer Number cannot count by ones
  // (SAMPLE_SEED took it and the crawl refused it at its first day).
  if (!Number.isSafeInteger(n) || n < 0) throw configError(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

/**
 * Where 0 would do harm no one setting it wants, refused at start: a retention of nothing,
 * RELEASES_KEEP=0 (each new release pruned with the rest the moment it is published), a rate
 * limit of 0 (every request refused).
 */
function positive(n: number, name: string, why = ''): number {
  if (n < 1) throw configError(`${name} must be at least 1, got ${n}${why}`);
  return n;
}

/** Longest timer Node keeps: a longer one fires at once (REPLAY_DROP_GRACE_MS would drop at once). */
const MAX_TIMER_MS = 2_147_483_647;

function atMost(n: number, max: number, name: string): number {
  if (n > max) throw configError(`${name} must be at most ${max}, got ${n}`);
  return n;
}

function port1to65535(value: string, name: string): number {
  const n = int(value.trim(), 0, name);
  if (n < 1 || n > 65_535) throw configError(`${name} must be a port between 1 and 65535, got "${value}"`);
  return n;
}

function url(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

/**
 * A connection string with its password hidden, as given otherwise: for error messages and the
 * engines' log line. Not by URL parsing: `mongodb://u:p@a:27017,b:27017/` (several hosts) is no
 * WHATWG URL, and such a parse failing left the password in the log.
 */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^:/@]*):([^@]*)@/, '//$1:***@');
}

/**
 * A server's connection string, checked at start for its scheme and a host after it: a typo
 * otherwise surfaced as the driver's stack trace (MongoDB, EventStoreDB, OpenSearch) or, for
 * Redis and S3, only at the first request or release. The drivers parse the rest; several hosts
 * (`mongodb://a:27017,b:27017/`) are theirs to read, so only the scheme and host are checked here.
 */
function serverUrl(value: string | undefined, name: string, schemes: readonly string[], example: string): string | null {
  const v = url(value);
  if (v === null) return null;
  const scheme = schemes.find((s) => v.toLowerCase().startsWith(`${s}://`));
  const host = scheme === undefined ? '' : v.slice(scheme.length + 3).replace(/^[^@/]*@/, '');
  if (scheme === undefined || !/^[^/?#\s]/.test(host) || /\s/.test(v)) {
    throw configError(`${name} must start with ${schemes.map((s) => `${s}://`).join(' or ')} and name a host, such as ${example}; got "${redactUrl(v)}"`);
  }
  return v;
}

/** An absolute http(s) URL a client is handed (download links): a typo would be in every answer. */
function httpUrl(value: string, name: string): string {
  let parsed: URL | null = null;
  try {
    parsed = new URL(value);
  } catch {
    parsed = null;
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    throw configError(`${name} must be an http:// or https:// URL, got "${redactUrl(value)}"`);
  }
  return value;
}

/** `host:port,host:port`, as kafkajs takes its bootstrap brokers. */
function kafkaBrokers(value: string | undefined): string | null {
  const v = url(value);
  if (v === null) return null;
  for (const broker of v.split(',')) {
    const match = /^([^\s:,]+|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(broker.trim());
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 65_535) {
      throw configError(`KAFKA_BROKERS takes host:port pairs separated by commas, such as 127.0.0.1:9092; got "${broker.trim()}"`);
    }
  }
  return v;
}

/**
 * A name the server makes part of its own names, checked against the server's rules at start
 * (a MongoDB database named `my.db` failed with the driver's stack trace, a Kafka prefix with a
 * `/` at the first topic creation, an index prefix in capitals at the first index).
 */
function serverName(value: string, name: string, pattern: RegExp, rule: string): string {
  if (!pattern.test(value)) throw configError(`${name} ${rule}; got "${value}"`);
  return value;
}

/**
 * The sample's first day: a date that is not one failed deep in the load with a RangeError. Its
 * days must all have come, the last (`days` - 1 later) today at the latest: each is ranked, and
 * a day's ranking is refused until the day comes (services/ranking/job.ts), so a later start
 * stopped the load after its first crawl.
 */
function sampleStartDate(value: string | undefined, days: number, today: string): string | null {
  const v = value?.trim() || null;
  if (v === null) return null;
  if (!isIsoDate(v)) throw configError(`SAMPLE_START_DATE takes a date YYYY-MM-DD, got "${v}"`);
  const last = new Date(Date.parse(`${v}T00:00:00Z`) + (Math.max(1, days) - 1) * 86_400_000).toISOString().slice(0, 10);
  if (last > today) {
    throw configError(`SAMPLE_START_DATE ${v} puts the sample's last day (${last}, ${days} days: SAMPLE_DAYS) after today (${today}, UTC); the sample's days must have come`);
  }
  return v;
}

/**
 * Days of the sample: 0 was read as 1 without a word, and a count past what a date holds
 * (1,000,000,000) ended the start with a RangeError's stack. Ten years of daily crawls is the
 * most: about 1.5 s a day, an hour and a half to load.
 */
function sampleDays(value: string | undefined): number {
  return atMost(positive(int(value, 7, 'SAMPLE_DAYS'), 'SAMPLE_DAYS', ' (a sample of no day holds nothing)'), MAX_SAMPLE_DAYS, 'SAMPLE_DAYS');
}
const MAX_SAMPLE_DAYS = 3660;

/**
 * API worker processes: 0 was read as 1 without a word, and 500 forked 500 processes, each with
 * its own catalog caches in memory, on a machine of 2 cores. At most four per core: more only
 * compete for the cores.
 */
function apiWorkerCount(value: string | undefined): number {
  const n = positive(int(value, 1, 'API_WORKERS'), 'API_WORKERS');
  const max = 4 * availableParallelism();
  if (n > max) throw configError(`API_WORKERS must be at most ${max} (four per core of this machine's ${availableParallelism()}; \`auto\` is one per core), got ${n}`);
  return n;
}

/** Two-letter codes; which of them the sample covers is the crawler's to say, when the load starts. */
function sampleCountries(value: string): string[] {
  const codes = value.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean);
  const bad = codes.find((c) => !/^[A-Z]{2}$/.test(c));
  if (bad !== undefined || codes.length === 0) throw configError(`SAMPLE_COUNTRIES takes two-letter country codes separated by commas, such as US,DE; got "${value}"`);
  return codes;
}

/** pino's levels: another is refused by pino with a stack trace. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function logLevel(value: string | undefined): string {
  const v = value?.trim() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(v)) throw configError(`LOG_LEVEL takes one of ${LOG_LEVELS.join(', ')}; got "${v}"`);
  return v;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // 0 takes a free port (tests); above 65535 is no port, refused here rather than at listen.
  const port = env.PORT?.trim() === '0' ? 0 : env.PORT?.trim() ? port1to65535(env.PORT, 'PORT') : 8080;
  const brokers = kafkaBrokers(env.KAFKA_BROKERS);
  const eventStoreUrl = serverUrl(env.EVENTSTORE_URL, 'EVENTSTORE_URL', ['esdb', 'esdb+discover'], 'esdb://127.0.0.1:2113?tls=false');
  // Kafka topic names: letters, digits, '.', '_', '-', at most 249 (the longest suffix is 22).
  const kafkaTopicPrefix = serverName(env.KAFKA_TOPIC_PREFIX || 'marquee.', 'KAFKA_TOPIC_PREFIX', /^[A-Za-z0-9._-]{1,200}$/, 'takes letters, digits, ".", "_" and "-" (at most 200), as Kafka topic names do');
  const apiWorkers = env.API_WORKERS?.trim() === 'auto' ? availableParallelism() : apiWorkerCount(env.API_WORKERS);
  const days = sampleDays(env.SAMPLE_DAYS);
  return {
    port,
    apiWorkers,
    isApiWorker: env.MARQUEE_API_WORKER === '1',
    host: env.HOST?.trim() || '127.0.0.1',
    opsPort: env.OPS_PORT?.trim() ? port1to65535(env.OPS_PORT, 'OPS_PORT') : null,
    roles: [...ROLES],
    dataDir: resolve(env.DATA_DIR ?? './data'),
    kafkaBrokers: brokers === null ? null : brokers.split(',').map((b) => b.trim()).filter(Boolean),
    kafkaTopicPrefix,
    ingestGroup: env.INGEST_GROUP || `${kafkaTopicPrefix}ingest`,
    eventStoreUrl,
    eventStore: eventStoreEngine(env.EVENT_STORE, brokers, eventStoreUrl),
    mongodbUrl: serverUrl(env.MONGODB_URL, 'MONGODB_URL', ['mongodb', 'mongodb+srv'], 'mongodb://127.0.0.1:27017'),
    mongodbDb: serverName(env.MONGODB_DB || 'marquee', 'MONGODB_DB', /^[^/\\. "$*<>:|?\u0000]{1,63}$/, 'is a MongoDB database name: at most 63 characters, none of / \\ . " $ * < > : | ? or a space'),
    opensearchUrl: serverUrl(env.OPENSEARCH_URL, 'OPENSEARCH_URL', ['http', 'https'], 'http://127.0.0.1:9200'),
    redisUrl: serverUrl(env.REDIS_URL, 'REDIS_URL', ['redis', 'rediss'], 'redis://127.0.0.1:6379'),
    rateLimitPerMinute: positive(int(env.RATE_LIMIT_PER_MINUTE, 60, 'RATE_LIMIT_PER_MINUTE'), 'RATE_LIMIT_PER_MINUTE', ' (0 would refuse every request)'),
    goRateLimitPerMinute: positive(int(env.GO_RATE_LIMIT_PER_MINUTE, 120, 'GO_RATE_LIMIT_PER_MINUTE'), 'GO_RATE_LIMIT_PER_MINUTE', ' (0 would refuse every redirect)'),
    trustedProxies: int(env.TRUSTED_PROXIES, 0, 'TRUSTED_PROXIES'),
    linkTokenKeys: url(env.LINK_TOKEN_KEYS),
    downloadSigningKey: signingKey(url(env.DOWNLOAD_SIGNING_KEY)),
    imageBase: env.IMAGE_BASE ? httpUrl(env.IMAGE_BASE, 'IMAGE_BASE') : 'https://images.marquee.example',
    publicBaseUrl: env.PUBLIC_BASE_URL ? httpUrl(env.PUBLIC_BASE_URL, 'PUBLIC_BASE_URL') : `http://localhost:${port}`,
    opensearchIndexPrefix: serverName(env.OPENSEARCH_INDEX_PREFIX || 'marquee-search', 'OPENSEARCH_INDEX_PREFIX', /^[a-z0-9][a-z0-9._-]{0,199}$/, 'takes lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (at most 200), as OpenSearch index names do'),
    logLevel: logLevel(env.LOG_LEVEL),
    logJson: env.LOG_FORMAT === 'json',
    sampleStartDate: sampleStartDate(env.SAMPLE_START_DATE, days, new Date().toISOString().slice(0, 10)),
    replayDropGraceMs: atMost(int(env.REPLAY_DROP_GRACE_MS, 3000, 'REPLAY_DROP_GRACE_MS'), MAX_TIMER_MS, 'REPLAY_DROP_GRACE_MS'),
    sampleSeed: int(env.SAMPLE_SEED, 42, 'SAMPLE_SEED'),
    sampleDays: days,
    sampleTitles: env.SAMPLE_TITLES ? atMost(positive(int(env.SAMPLE_TITLES, 0, 'SAMPLE_TITLES'), 'SAMPLE_TITLES'), 5_000_000, 'SAMPLE_TITLES') : null,
    sampleCountries: env.SAMPLE_COUNTRIES ? sampleCountries(env.SAMPLE_COUNTRIES) : null,
    releasesKeep: positive(int(env.RELEASES_KEEP, 8, 'RELEASES_KEEP'), 'RELEASES_KEEP', ' (0 would prune each release the moment it is published)'),
    releasesS3: releasesS3(env),
    ingestMaxFutureSkewHours: int(env.INGEST_MAX_FUTURE_SKEW_HOURS, 24, 'INGEST_MAX_FUTURE_SKEW_HOURS'),
    inboxRetentionHours: positive(int(env.INBOX_RETENTION_HOURS, 168, 'INBOX_RETENTION_HOURS'), 'INBOX_RETENTION_HOURS'),
  };
}

/** Shortest DOWNLOAD_SIGNING_KEY taken: an HMAC key anyone could guess signs URLs for anyone. */
export const MIN_SIGNING_KEY_LENGTH = 32;

function signingKey(value: string | null): string | null {
  if (value !== null && value.length < MIN_SIGNING_KEY_LENGTH) {
    throw configError(`DOWNLOAD_SIGNING_KEY is too short (${value.length} characters): it signs download URLs, so it must be at least ${MIN_SIGNING_KEY_LENGTH}; make one with \`openssl rand -hex 32\``);
  }
  return value;
}

function releasesS3(env: NodeJS.ProcessEnv): Config['releasesS3'] {
  const endpoint = serverUrl(env.RELEASES_S3_URL, 'RELEASES_S3_URL', ['http', 'https'], 'https://s3.amazonaws.com');
  if (endpoint === null) return null;
  const accessKeyId = url(env.RELEASES_S3_ACCESS_KEY);
  const secretAccessKey = url(env.RELEASES_S3_SECRET_KEY);
  // Half a key pair would silently fall back to other credentials: refuse it at start.
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw configError('RELEASES_S3_ACCESS_KEY and RELEASES_S3_SECRET_KEY must be set together');
  }
  return {
    url: endpoint,
    bucket: env.RELEASES_S3_BUCKET || 'marquee-releases',
    prefix: env.RELEASES_S3_PREFIX ?? '',
    region: env.RELEASES_S3_REGION || 'us-east-1',
    accessKeyId,
    secretAccessKey,
  };
}

/** The secrets `start` needs, by variable name, that are not configured. */
export function unsetSecrets(config: Pick<Config, 'linkTokenKeys' | 'downloadSigningKey'>): string[] {
  const unset: string[] = [];
  if (config.linkTokenKeys === null) unset.push('LINK_TOKEN_KEYS');
  if (config.downloadSigningKey === null) unset.push('DOWNLOAD_SIGNING_KEY');
  return unset;
}

/**
 * The error of a secret that is not configured outside `--sample`: one line naming the
 * variables, printed by the CLI as it is.
 */
export function missingSecret(...variables: string[]): AppError {
  const names = variables.join(' and ');
  return new AppError(
    'missing_parameter',
    `${names} ${variables.length > 1 ? 'are' : 'is'} not set: configure ${variables.length > 1 ? 'them' : 'it'} (see README "Configuration"), or pass --sample to run the sample catalog on the development keys`,
    { details: { variables } },
  );
}

