/**
 * The embedded ObservationBus: a durable local inbox in the shared LMDB environment. It stores
 * the same Avro single-object records Kafka carries (contracts/codec.ts), so a crawler can
 * switch transport without changing a byte.
 *
 * Named databases:
 * - `inbox`: sequence (1, 2, ...) -> record bytes; the sequence is assigned inside the write
 *   transaction, so several processes can publish to one inbox (LMDB serialises writers);
 * - `inbox_offsets`: consumer group -> last sequence it handled (committed after the handler);
 * - `dead_letters`: id (1, 2, ...) -> DeadLetter; `dead_letter_keys`: `source \0 reason` (its
 *   hash when long) -> id, so a redelivered poison record is not dead-lettered twice;
 * - `inbox_times`: sequence -> publish time (ms): the records from that sequence up to the next
 *   mark's were published within a minute from that time (a publish outside that minute, later
 *   or earlier by a clock set back, writes a new mark), about 10,000 marks a week.
 *
 * Retention, as Kafka's topics have it (7 days by default): a record is removed once it is older
 * than `retentionMs` and every group that ever committed has handled it, so an observation no
 * group has handled is never lost, and the newest record always stays (the next sequence is the
 * last key plus one, so removing it would hand out numbers the groups have already passed).
 * Dead letters older than `retentionMs` go too. Every daily crawl publishes the whole catalog
 * again, so without this the data directory grew by the size of a crawl every day.
 *
 * One consumer per group at a time: the inbox has no partitions to share out, and a second
 * consumer of the same group in this process is refused (another process is not detected).
 */
import { createHash } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';
import { decodeObservation, encodeObservation, validateDecodedObservation } from '../../contracts/codec.ts';
import { AppError } from '../../contracts/errors.ts';
import type { Observation } from '../../contracts/observations.ts';
import {
  systemClock,
  type Clock,
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  type ObservationBus,
  type ObservationRecord,
} from '../../contracts/ports.ts';
import { closeLmdb, openLmdb } from './env.ts';
import { lmdbError } from './errors.ts';

export interface LmdbInboxOptions {
  /** Data directory; the inbox lives in the LMDB environment of `<dataDir>/lmdb`. */
  dataDir: string;
  /** How long a caught-up consumer waits before checking for new records, in ms. Default 50. */
  pollMs?: number;
  /** Stamps dead letters and records; the time retention is measured by. Default the system clock. */
  clock?: Clock;
  /** How long handled records and dead letters are kept, in ms. Default 7 days (Kafka's default). */
  retentionMs?: number;
  /** How often a consumer removes what retention lets go, in ms. Default 60,000. */
  pruneEveryMs?: number;
}

/** What the inbox holds, for `marquee status`. */
export interface InboxRetained {
  /** Records kept, and their first and last sequence (0 and 0 when empty). */
  records: number;
  firstSequence: number;
  lastSequence: number;
  /** When the oldest kept record was published, as far as the minute marks tell; null if unknown. */
  oldestPublishedAt: string | null;
  retentionMs: number;
}

export interface LmdbInbox extends ObservationBus {
  /**
   * Appends already-encoded records as they are, in one durable transaction (a bridge from
   * another transport, or a test injecting undecodable bytes). Resolves to the last sequence.
   */
  publishRaw(records: readonly Uint8Array[]): Promise<number>;
  /** The sequence of the newest record, 0 when the inbox is empty. */
  lastSequence(): number;
  /** The committed offset of a group (the last sequence it handled), 0 before its first commit. */
  committedOffset(group: string): number;
  /**
   * Removes the records and dead letters retention lets go, in transactions of at most
   * PRUNE_CHUNK keys; resolves to how many of each went. Consumers call it every `pruneEveryMs`.
   */
  prune(): Promise<{ records: number; deadLetters: number }>;
  retained(): InboxRetained;
}

/**
 * The key that recognises a dead letter written before. A reason may name a stream too long
 * for an LMDB key (the very reason it was refused), so a long one is keyed by its hash; short
 * ones keep the readable form earlier versions wrote.
 */
function dedupeKeyOf(source: string, reason: string): string {
  const key = `${source}\u0000${reason}`;
  return key.length <= 400 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * A payload as plain JSON values: a dead letter must always be writable, even for an
 * observation holding what the store cannot encode (a BigInt past 64 bits), or the batch that
 * refused it would fail on every redelivery.
 */
function storable(payload: unknown): unknown {
  const json = JSON.stringify(payload, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return json === undefined ? null : JSON.parse(json);
}

const DEFAULT_GROUP = 'ingest';
const DEFAULT_BATCH = 500;
const DEFAULT_DEAD_LETTER_LIMIT = 100;
const DEFAULT_INBOX_RETENTION_MS = 7 * 24 * 3600 * 1000;
const DEFAULT_PRUNE_EVERY_MS = 60_000;
/** One time mark per minute at most: ~10,000 a week, however many records are published. */
const MARK_EVERY_MS = 60_000;
/** Keys removed per write transaction: short enough not to hold the environment's write lock. */
const PRUNE_CHUNK = 10_000;

export function lmdbInbox(options: LmdbInboxOptions): LmdbInbox {
  const { dataDir } = options;
  const pollMs = options.pollMs ?? 50;
  const clock = options.clock ?? systemClock;
  const retentionMs = options.retentionMs ?? DEFAULT_INBOX_RETENTION_MS;
  const pruneEveryMs = options.pruneEveryMs ?? DEFAULT_PRUNE_EVERY_MS;
  if (!(retentionMs > 0)) throw new AppError('internal', `retentionMs must be positive, got ${retentionMs}`);
  const root: RootDatabase = openLmdb({ dataDir });
  const inbox: Database<Uint8Array, number> = root.openDB({ name: 'inbox', encoding: 'binary' });
  const offsets: Database<number, string> = root.openDB({ name: 'inbox_offsets' });
  const deadLetters: Database<DeadLetter, number> = root.openDB({ name: 'dead_letters' });
  const deadLetterKeys: Database<number, string> = root.openDB({ name: 'dead_letter_keys' });
  const times: Database<number, number> = root.openDB({ name: 'inbox_times' });

  let closed = false;
  const active = new Map<string, Consumer>();
  /**
   * When a consumer of this inbox last pruned: kept here, not per consumer, since a load that
   * consumes until idle starts a consumer each time it catches up with the crawl.
   */
  let lastPrune = -Infinity;

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'the inbox is closed');
  }

  function lastKey<V>(db: Database<V, number>): number {
    for (const key of db.getKeys({ reverse: true, limit: 1 })) return key;
    return 0;
  }

  function lastEntry<V>(db: Database<V, number>): { key: number; value: V } | null {
    for (const entry of db.getRange({ reverse: true, limit: 1 })) return entry;
    return null;
  }

  function firstKey<V>(db: Database<V, number>): number {
    for (const key of db.getKeys({ limit: 1 })) return key;
    return 0;
  }

  async function removeKeys<V>(db: Database<V, number>, keys: number[], also?: (key: number) => void): Promise<void> {
    await root.transaction(() => {
      for (const key of keys) {
        also?.(key);
        void db.remove(key);
      }
    });
  }

  /** Removes the records from `start` to `end` (inclusive), PRUNE_CHUNK keys per transaction. */
  async function removeRange(start: number, end: number): Promise<number> {
    let removed = 0;
    // Each round starts past the last key removed: a read that still saw them could not spin.
    for (let from = start; from <= end; ) {
      const keys = [...inbox.getKeys({ start: from, end: end + 1, limit: PRUNE_CHUNK })];
      if (keys.length === 0) break;
      await removeKeys(inbox, keys);
      removed += keys.length;
      from = (keys.at(-1) as number) + 1;
    }
    return removed;
  }

  /**
   * Each minute's records go as a whole once the minute has passed the retention, if every
   * group that committed has handled them and the newest record is not among them. Minutes are
   * taken one by one rather than as a prefix: a mark dated in the future by a clock set wrong
   * holds back its own records only, not everything published after it.
   */
  async function pruneRecords(cutoff: number): Promise<number> {
    let handled = Infinity;
    for (const { value } of offsets.getRange({})) handled = Math.min(handled, value);
    // Before any group has committed, nothing has been handled.
    if (handled === Infinity) return 0;
    const limit = Math.min(handled, lastSequence() - 1);
    if (!(limit >= 1)) return 0;
    const marks = [...times.getRange({})];
    let removed = 0;
    // Records older than every mark (written before marks existed) were published before the first.
    const first = marks[0];
    if (first !== undefined && first.value <= cutoff) removed += await removeRange(1, Math.min(first.key - 1, limit));
    for (let i = 0; i < marks.length; i += 1) {
      const { key, value } = marks[i] as { key: number; value: number };
      if (key > limit) break;
      if (value + MARK_EVERY_MS > cutoff) continue;
      const next = marks[i + 1];
      const end = next === undefined ? limit : Math.min(next.key - 1, limit);
      removed += await removeRange(key, end);
      // The minute's mark goes with its last record; the newest mark always stays (publishing
      // compares against it).
      const left = [...inbox.getKeys({ start: key, end: end + 1, limit: 1 })].length;
      if (next !== undefined && end === next.key - 1 && left === 0) await removeKeys(times, [key]);
    }
    return removed;
  }

  async function prune(): Promise<{ records: number; deadLetters: number }> {
    ensureOpen();
    const cutoff = clock.now().getTime() - retentionMs;
    let records = 0;
    let removedLetters = 0;
    try {
      inbox.resetReadTxn();
      records = await pruneRecords(cutoff);
      // Dead letters are numbered in the order they were written, so the old ones come first.
      for (let from = 0; ; ) {
        const old: number[] = [];
        const keysOf = new Map<number, string>();
        for (const { key, value } of deadLetters.getRange({ start: from, limit: PRUNE_CHUNK })) {
          if (Date.parse(value.at) > cutoff) break;
          old.push(key);
          keysOf.set(key, dedupeKeyOf(value.source, value.reason));
        }
        if (old.length === 0) break;
        from = (old.at(-1) as number) + 1;
        // The dedupe key goes with it, unless it already points at a newer letter.
        await removeKeys(deadLetters, old, (id) => {
          const dedupeKey = keysOf.get(id) as string;
          if (deadLetterKeys.get(dedupeKey) === id) void deadLetterKeys.remove(dedupeKey);
        });
        removedLetters += old.length;
      }
    } catch (err) {
      throw lmdbError(err, 'the local inbox');
    }
    return { records, deadLetters: removedLetters };
  }

  function retained(): InboxRetained {
    inbox.resetReadTxn();
    const first = firstKey(inbox);
    const last = lastSequence();
    // The mark at or before the first record kept; records older than every mark have none.
    let oldest: number | null = null;
    for (const { value } of times.getRange({ reverse: true, start: first, limit: 1 })) oldest = value;
    return {
      records: inbox.getCount(),
      firstSequence: first,
      lastSequence: last,
      oldestPublishedAt: first === 0 || oldest === null ? null : new Date(oldest).toISOString(),
      retentionMs,
    };
  }

  function lastSequence(): number {
    return lastKey(inbox);
  }

  function committedOffset(group: string): number {
    return offsets.get(group) ?? 0;
  }

  async function publishRaw(records: readonly Uint8Array[]): Promise<number> {
    ensureOpen();
    if (records.length === 0) return lastSequence();
    try {
      // Read the last sequence inside the write transaction: no other writer, in this process
      // or another, can take the same numbers.
      return await root.transaction(() => {
        let seq = lastKey(inbox);
        const now = clock.now().getTime();
        const mark = lastEntry(times);
        if (mark === null || now - mark.value >= MARK_EVERY_MS || now < mark.value) void times.put(seq + 1, now);
        for (const record of records) {
          seq += 1;
          void inbox.put(seq, record);
        }
        return seq;
      });
    } catch (err) {
      throw lmdbError(err, 'the local inbox');
    }
  }

  async function writeDeadLetter(source: string, payload: unknown, reason: string): Promise<void> {
    ensureOpen();
    const dedupeKey = dedupeKeyOf(source, reason);
    try {
      await root.transaction(() => {
        if (deadLetterKeys.get(dedupeKey) !== undefined) return;
        const id = lastKey(deadLetters) + 1;
        void deadLetters.put(id, { id: String(id), reason, payload: storable(payload), source, at: clock.now().toISOString() });
        void deadLetterKeys.put(dedupeKey, id);
      });
    } catch (err) {
      throw lmdbError(err, 'the local inbox');
    }
  }

  /**
   * Decodes and validates one stored record (the one validation it gets), or says what to
   * dead-letter instead. Synchronous: a batch's records are decoded without an await each.
   */
  function toRecord(seq: number, bytes: Uint8Array): ObservationRecord | { source: string; payload: unknown; reason: string } {
    const source = `inbox:${seq}`;
    let observation: Observation;
    try {
      observation = decodeObservation(bytes);
    } catch (err) {
      return { source, payload: Buffer.from(bytes).toString('base64'), reason: (err as Error).message };
    }
    const reason = validateDecodedObservation(observation);
    if (reason !== null) return { source, payload: observation, reason };
    return { source, observation };
  }

  function consume(handler: (batch: ObservationRecord[]) => Promise<void>, consumeOptions: ConsumeOptions = {}): Consumer {
    ensureOpen();
    const group = consumeOptions.group ?? DEFAULT_GROUP;
    const batchSize = consumeOptions.batchSize ?? DEFAULT_BATCH;
    const untilIdle = consumeOptions.untilIdle ?? false;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new AppError('internal', `batchSize must be a positive integer, got ${batchSize}`);
    }
    if (active.has(group)) throw new AppError('internal', `group ${group} already has a consumer in this process`);

    let stopping = false;
    let wake: (() => void) | null = null;
    const idle = () => new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, pollMs);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

    /** The records past `offset` decoded (undecodable ones dead-lettered), or null when there are none. */
    const take = async (offset: number): Promise<{ last: number; records: ObservationRecord[] } | null> => {
      // The cheap check first: one key lookup tells whether anything is past our offset. The
      // read snapshot is renewed so records published by another process become visible.
      inbox.resetReadTxn();
      if (lastSequence() <= offset) return null;
      const entries = [...inbox.getRange({ start: offset + 1, limit: batchSize })];
      const records: ObservationRecord[] = [];
      for (const { key, value } of entries) {
        const record = toRecord(key, value);
        if ('observation' in record) records.push(record);
        else await writeDeadLetter(record.source, record.payload, record.reason);
      }
      return { last: entries.at(-1)?.key ?? offset, records };
    };

    const run = async (): Promise<void> => {
      let offset = committedOffset(group);
      let next: Awaited<ReturnType<typeof take>> = null;
      while (!stopping) {
        // Here rather than in a loop of its own: it fails, and is restarted, with the consumer.
        const now = clock.now().getTime();
        if (now - lastPrune >= pruneEveryMs || now < lastPrune) {
          lastPrune = now;
          await prune();
        }
        const batch = next ?? (await take(offset));
        next = null;
        if (batch === null) {
          if (untilIdle) return;
          await idle();
          continue;
        }
        // A failing handler ends the consumer before the commit: the batch is redelivered.
        if (batch.records.length > 0) await handler(batch.records);
        let committing: Promise<unknown>;
        try {
          committing = offsets.put(group, batch.last);
        } catch (err) {
          throw lmdbError(err, 'the local inbox');
        }
        // Awaited below, after the next batch is read: a commit failing meanwhile (a full disk)
        // would otherwise be an unhandled rejection, which ends the process.
        committing.catch(() => {});
        offset = batch.last;
        // The next batch is read and decoded while the offset's commit syncs, when this thread
        // would only wait. The commit is still awaited before the next batch is handled
        // (measured: left in flight, it kept the environment's write lock busy back to back and
        // the projection thread's writes waited: the first day of `start --sample` took 41-58 s
        // against 25-47 s).
        try {
          if (!stopping) next = await take(offset);
        } catch (err) {
          await committing.catch(() => {});
          throw err;
        }
        try {
          await committing;
        } catch (err) {
          throw lmdbError(err, 'the local inbox');
        }
      }
    };

    const done = run().finally(() => active.delete(group));
    // The caller observes `done`; this only keeps an unobserved failure from crashing the process.
    done.catch(() => {});
    const consumer: Consumer = {
      async stop() {
        stopping = true;
        (wake as (() => void) | null)?.();
        await done.catch(() => {});
      },
      done,
    };
    active.set(group, consumer);
    return consumer;
  }

  return {
    async publish(observations) {
      ensureOpen();
      // Encode (and so validate) everything first: a bad observation publishes nothing.
      const records = observations.map((o) => encodeObservation(o));
      await publishRaw(records);
    },
    publishRaw,
    lastSequence,
    committedOffset,
    prune,
    retained,
    consume,
    async deadLetter(record, reason) {
      const payload = 'observation' in record ? record.observation : record.payload;
      await writeDeadLetter(record.source, payload, reason);
    },
    async countDeadLetters() {
      ensureOpen();
      return deadLetters.getCount();
    },
    async listDeadLetters(listOptions = {}) {
      ensureOpen();
      const limit = listOptions.limit ?? DEFAULT_DEAD_LETTER_LIMIT;
      return [...deadLetters.getRange({ limit })].map(({ value }) => value);
    },
    async close() {
      if (closed) return;
      await Promise.all([...active.values()].map((c) => c.stop()));
      closed = true;
      await closeLmdb(dataDir);
    },
  };
}
