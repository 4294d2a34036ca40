/**
 * Ports: the small interfaces the application is written against. Each has one behaviour
 * suite under test/ports that every adapter runs (LMDB and MongoDB, inbox and Kafka, ...).
 * Adapters throw only AppError (contracts/errors.ts), converting driver errors at the edge.
 */
import type { AppError } from './errors.ts';
import type { DomainEvent, RecordedEvent } from './events.ts';
import type { Observation } from './observations.ts';

// ---------------------------------------------------------------------------------------------
// Clock

/** Injected wherever time matters, so daily and weekly jobs are testable. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

// ---------------------------------------------------------------------------------------------
// EventStore

/**
 * The revision the caller expects the stream to be at: the last revision it read (0-based),
 * `'no_stream'` for a stream that must not exist yet, or `'any'` to skip the check.
 */
export type ExpectedRevision = number | 'no_stream' | 'any';

export interface AppendRequest {
  stream: string;
  events: DomainEvent[];
  expectedRevision: ExpectedRevision;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextExpectedRevision: number;
  /** Global position of the last appended event. */
  position: number;
}

export interface ReadAllOptions {
  /** Read events strictly after this global position; 0 reads from the start. Default 0. */
  after?: number;
  /** At most this many events. Default 1000. */
  limit?: number;
}

export interface ReadBackwardsOptions {
  /** The newest revision to read (included). Default: the stream's last. */
  fromRevision?: number;
  /** At most this many events. Default 100. */
  limit?: number;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this global position (a checkpoint). Default 0. */
  after?: number;
  /** Largest batch handed to the handler at once. Default 1000. */
  batchSize?: number;
  /** How long to wait before polling again once caught up, in ms. Default 50. */
  idleMs?: number;
}

export interface Subscription {
  /** Stops delivering; resolves when the handler in flight (if any) has returned. */
  stop(): Promise<void>;
  /** Resolves when the subscription ends: after stop(), or rejects if a handler threw. */
  readonly done: Promise<void>;
}

export interface EventStore {
  /**
   * Appends events to one stream atomically. Throws AppError `wrong_expected_revision` when the
   * stream is not at `expectedRevision`, never overwriting. Durable when it resolves.
   */
  append(stream: string, events: DomainEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends to several streams in one durable write where the engine allows it (the ingest
   * hot path). Each request is checked on its own: a conflict in one does not fail the others;
   * its slot in the result holds the AppError instead.
   */
  appendMany(requests: AppendRequest[]): Promise<Array<AppendResult | AppError>>;
  /** The events of one stream from `fromRevision` (default 0), oldest first; [] for a missing stream. */
  readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]>;
  /**
   * The events of one stream at or below `fromRevision` (default: the stream's last), newest
   * first, at most `limit` (default 100); [] for a missing stream. What a caller that needs only a stream's recent events reads instead of the whole
   * stream (the ranking job reads the previous day's chart): EventStoreDB reads backwards from
   * the end natively, the other adapters from their per-stream index.
   */
  readStreamBackwards(stream: string, options?: ReadBackwardsOptions): Promise<RecordedEvent[]>;
  /** The last revision of a stream, or -1 when it does not exist. */
  streamRevision(stream: string): Promise<number>;
  /** Events of all streams in global order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Global position of the newest event, 0 when the store is empty. */
  headPosition(): Promise<number>;
  /**
   * Catch-up subscription to all events: first the history after `after`, then live events.
   * The next batch is read only after the handler's promise resolves.
   */
  subscribeAll(handler: (batch: RecordedEvent[]) => Promise<void>, options?: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// ObservationBus

/** One delivered observation, or one that could not be decoded (it goes to the dead letters). */
export interface ObservationRecord {
  /** Transport position, for logs: `inbox:42`, `kafka:topic/partition/offset`. */
  source: string;
  observation: Observation;
}

export interface DeadLetter {
  id: string;
  /** Why it was refused, for a person. */
  reason: string;
  /** The raw record as far as it could be read (the observation, or base64 bytes). */
  payload: unknown;
  source: string;
  at: string;
}

export interface ConsumeOptions {
  /** Consumer group; processes in one group share the work. Default `ingest`. */
  group?: string;
  /** Largest batch handed to the handler at once. Default 500. */
  batchSize?: number;
  /** Stop once everything published so far has been handled (for CLI runs and tests). Default false. */
  untilIdle?: boolean;
}

export interface Consumer {
  stop(): Promise<void>;
  /** Resolves when the consumer ends (untilIdle reached, or stop()); rejects on a fatal error. */
  readonly done: Promise<void>;
}

export interface ObservationBus {
  /** Publishes in batches; durable (acknowledged) when it resolves. */
  publish(observations: Observation[]): Promise<void>;
  /**
   * Delivers batches to the handler; a batch counts as consumed (offset committed) only after
   * the handler resolves, so a crash redelivers it. Records that do not decode or validate
   * (codec.ts `validateDecodedObservation`: decoding proves the schema, then the domain rules)
   * go to the dead letters and are not delivered: what the handler gets was validated, once.
   */
  consume(handler: (batch: ObservationRecord[]) => Promise<void>, options?: ConsumeOptions): Consumer;
  /** Records an observation that ingest refused, with the reason; the rest goes on. */
  deadLetter(record: ObservationRecord | { source: string; payload: unknown }, reason: string): Promise<void>;
  listDeadLetters(options?: { limit?: number }): Promise<DeadLetter[]>;
  /** How many dead letters are kept (what listDeadLetters lists without a limit), none read. */
  countDeadLetters(): Promise<number>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// ReadStore

export interface StoredDocument<T = unknown> {
  key: string;
  doc: T;
  /** Global position of the last event folded into this document. */
  position: number;
}

export interface DocumentWrite<T = unknown> {
  key: string;
  /** null deletes the document (the deletion still records its position). */
  doc: T | null;
  position: number;
}

export interface ScanOptions {
  /** Only keys starting with this prefix. */
  prefix?: string;
  /** Keys >= start (after applying prefix). */
  start?: string;
  /** Keys < end. */
  end?: string;
  offset?: number;
  limit?: number;
  reverse?: boolean;
}

export interface WriteBatchResult {
  written: number;
  /** Writes skipped because the stored position was not behind theirs (redelivery, replay). */
  skipped: number;
}

export interface ReadStore {
  get<T>(collection: string, key: string): Promise<StoredDocument<T> | null>;
  /** Same order as `keys`, null where missing. */
  getMany<T>(collection: string, keys: string[]): Promise<Array<StoredDocument<T> | null>>;
  /** Documents in ascending key order (byte order of the UTF-8 key). */
  scan<T>(collection: string, options?: ScanOptions): Promise<Array<StoredDocument<T>>>;
  count(collection: string, options?: { prefix?: string }): Promise<number>;
  /**
   * Writes documents, skipping each whose stored position is >= its own, and (in the same
   * atomic write where the engine allows) moves the named checkpoint to `checkpoint.position`.
   */
  writeBatch<T>(
    collection: string,
    writes: Array<DocumentWrite<T>>,
    checkpoint?: { name: string; position: number },
  ): Promise<WriteBatchResult>;
  /**
   * Removes documents outright, tombstones too, whatever their positions: for keys no write will
   * ever come back to (a lease's past epochs), where a deletion by writeBatch would leave a
   * tombstone for good. A write to a purged key later is a write to a new key.
   */
  purge(collection: string, keys: string[]): Promise<void>;
  getCheckpoint(name: string): Promise<number>;
  /**
   * Several checkpoints at once, in the order asked (0 for one never set): the API stamps each
   * kept answer with the checkpoints of its read models on every request, so one read, not one
   * per model.
   */
  getCheckpoints(names: readonly string[]): Promise<number[]>;
  setCheckpoint(name: string, position: number): Promise<void>;
  /** Drops a collection and everything in it (an old projection version after a switch). */
  dropCollection(collection: string): Promise<void>;
  /** Aliases: the live physical collection of a read model, switched atomically after a rebuild. */
  getAlias(name: string): Promise<string | null>;
  /**
   * Points the alias at `collection` and answers the collection it named just before (null if
   * none), in one step: two rebuilds switching at once each learn a different predecessor, so
   * each drops exactly the copy it replaced and none is left behind unnamed.
   */
  setAlias(name: string, collection: string): Promise<string | null>;
  listCollections(): Promise<string[]>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SearchIndex

/** What the search projection indexes per title (one document serves every locale). */
export interface SearchDocument {
  id: string;
  kind: 'movie' | 'tv_show';
  title: string;
  originalTitle: string | null;
  /** Translated titles by language code. */
  titles: Record<string, string>;
  year: number | null;
  genres: string[];
  popularity: number;
  /** Provider ids (slugs) offering the title, per upper-case country; the API maps a `provider=<short_id>` filter to the id. */
  availability: Record<string, string[]>;
}

/**
 * Bounds of `SearchQuery.q` that the API enforces (400 past them) so that one search costs a
 * bounded amount of work. 200 characters and 20 words hold the longest real titles with room
 * ("Dr. Strangelove or: How I Learned to Stop Worrying and Love the Bomb": 68 characters, 13
 * words; the sample's longest title has 66 characters, 12 words), and a query at both bounds
 * stays well under 50 ms of event loop on the sample catalog (test/e2e/hostile.api.e2e.test.ts).
 * Words are counted as the API counts them, separated by white space; the indexes look up at
 * most SEARCH_QUERY_MAX_WORDS of their own (normalised) words whatever a caller passes.
 */
export const SEARCH_QUERY_MAX_CHARS = 200;
export const SEARCH_QUERY_MAX_WORDS = 20;

export interface SearchQuery {
  /** At most SEARCH_QUERY_MAX_CHARS characters and SEARCH_QUERY_MAX_WORDS words when it comes from the API. */
  q: string;
  /** Upper-case country: titles available there rank first; `provider` filters within it. */
  country: string;
  lang: string;
  kind?: 'movie' | 'tv_show';
  genre?: string;
  provider?: string;
  limit: number;
  offset: number;
}

export interface SearchResult {
  total: number;
  /** Media ids of the page, best first. */
  ids: string[];
}

/** One versioned write of the search feed: the title's document, or null to remove it. */
export interface SearchWrite {
  id: string;
  doc: SearchDocument | null;
  /**
   * The position of the read-model document it was built from (the last event folded into it):
   * an ever-growing version per title.
   */
  version: number;
}

export interface SearchIndex {
  /** Indexes documents as they are, unversioned (tests, benchmarks, a fresh index). */
  upsert(docs: SearchDocument[]): Promise<void>;
  /** Removes titles, unversioned; a missing id is not an error. */
  remove(ids: string[]): Promise<void>;
  /**
   * Applies versioned writes, each only if its version is at or above the one the index holds
   * for that title (OpenSearch's `version_type: external_gte`): a replayed or late older write
   * never overwrites a newer one, and the same write twice is a no-op. This is what makes the
   * search feed safe to deliver at least once. A write superseded by a newer version is not an
   * error. Mixing unversioned and versioned writes of one title is not specified.
   */
  write(writes: SearchWrite[]): Promise<void>;
  search(query: SearchQuery): Promise<SearchResult>;
  /**
   * A number that changes with every write (upsert, remove, write), present only on an index
   * that nothing outside this process writes (the in-process one): until it changes, a query
   * gets the same answer, so the API may keep answers rendered from it. A shared index
   * (OpenSearch, written by whichever process runs the search feed) has none, and its answers
   * are asked for every time.
   */
  generation?(): number;
  count(): Promise<number>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// ReleaseStore

export interface ReleaseFile {
  path: string;
  sizeBytes: number;
  sha256: string;
}

export interface ReleaseManifest {
  version: string;
  publishedAt: string;
  countries: string[];
  files: ReleaseFile[];
  /** SNAPSHOT_SCHEMA_VERSION (contracts/snapshotSchema.ts) the files were written with. */
  schemaVersion?: number;
}

export interface ReleaseStore {
  /** Opens a new release for writing; nothing is visible until `publish`. */
  begin(version: string): Promise<ReleaseWriter>;
  list(): Promise<ReleaseManifest[]>;
  latest(): Promise<ReleaseManifest | null>;
  get(version: string): Promise<ReleaseManifest | null>;
  /**
   * Reads a byte range [start, end] inclusive of a file in a published release. Only exact
   * manifest entries are readable: anything else (an unknown version or path, `..`, a symlink)
   * throws AppError `not_found`, never reaching a file outside the release.
   */
  read(version: string, path: string, range?: { start: number; end: number }): Promise<NodeJS.ReadableStream>;
  /** Removes all but the newest `keep` releases. */
  prune(keep: number): Promise<string[]>;
}

export interface ReleaseWriter {
  /** Writes one file of the release at `path` (relative, e.g. `country=US/links.parquet`), returning its size and sha256. */
  write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<ReleaseFile>;
  /** Makes the release visible at once with its manifest; a version already published is refused (`forbidden`). */
  publish(meta: { publishedAt: string; countries: string[]; schemaVersion?: number }): Promise<ReleaseManifest>;
  abort(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// ApiKeyStore

/**
 * An API key as stored: never the key itself, only its SHA-256 (`hash`, the identity) and the
 * first characters for listing. Account data, not derived from events: it has a port of its
 * own instead of riding on a read model with a made-up position.
 */
export interface ApiKeyRecord {
  /** `key_` + the first 12 hex digits of the hash: how a person names it. */
  id: string;
  name: string;
  hash: string;
  /** First characters of the key, for listing without revealing it. */
  prefix: string;
  /** RFC 3339 UTC times, second precision. */
  createdAt: string;
  revokedAt: string | null;
  /** The last request seen with this key, recorded at most about once a minute. */
  lastUsedAt: string | null;
}

export interface ApiKeyStore {
  /** Stores a new key; a hash already stored is refused (`forbidden`) and the stored key kept. */
  create(key: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Every key, revoked ones included, oldest first (then by id). */
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Revokes a key at `at`; revoking twice keeps the first time. Returns the key as stored
   * afterwards, or null when no key has that hash.
   */
  revoke(hash: string, at: string): Promise<ApiKeyRecord | null>;
  /**
   * Records a use at `at`, only moving `lastUsedAt` forward (a late or repeated touch is a
   * no-op); an unknown hash is ignored. Callers throttle it: it is a write.
   */
  touch(hash: string, at: string): Promise<void>;
  close(): Promise<void>;
}
