/**
 * `consume` of the Kafka observation bus: one kafkajs consumer in the caller's group, subscribed
 * to every observation topic.
 *
 * Offsets are committed by hand (autoCommit and eachBatchAutoResolve off) after the handler
 * resolved the chunk that contains them, so a crash or a failing handler redelivers exactly the
 * unhandled records. A record that does not decode or validate is written to the dead-letter
 * topic before its offset is resolved, so it is never lost between the two.
 *
 * `untilIdle` takes the end offsets of every partition when the consumer starts and ends once
 * the group's committed offsets reached them all. The group's offsets, not this consumer's own
 * progress: several consumers of one group share the partitions, and a rebalance may move a
 * partition from one to another mid-run; each ends when the work of the whole group is done.
 */
import type { Admin, Consumer as KafkaConsumer, EachBatchPayload, Kafka } from 'kafkajs';
import { decodeObservation, validateDecodedObservation } from '../../contracts/codec.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { ConsumeOptions, Consumer, ObservationRecord } from '../../contracts/ports.ts';
import { kafkaError } from './client.ts';
import { sourceOf, type TopicNames } from './topics.ts';

export interface ConsumerContext {
  /** The client consumers are made from, retrying as `CONSUMER_RETRY` says. */
  kafka: Kafka;
  admin(): Promise<Admin>;
  topics: TopicNames;
  ensureTopics(names: readonly string[]): Promise<void>;
  /** Writes a record that could not be delivered to the dead-letter topic. */
  deadLetterBytes(source: string, reason: string, value: Buffer): Promise<void>;
  /** How long a fetch waits for new records before returning empty, in ms. */
  maxWaitMs: number;
  /** How often an untilIdle consumer checks the group's committed offsets, in ms. */
  idleCheckMs: number;
  /** Consumer group session timeout, in ms. */
  sessionTimeoutMs: number;
  /** Partitions whose batches are handled at once (kafkajs' partitionsConsumedConcurrently). */
  concurrency: number;
}

const DEFAULT_GROUP = 'ingest';

/**
 * How long a consumer's client retries connecting and its fetch loop before kafkajs gives up
 * and restarts the consumer: about 45 s (0.3 s doubling up to 5 s, 12 times), against its
 * default of about 10 s. A broker restart takes 10-20 s; a consumer that outlasts it keeps its
 * member and goes on as soon as the broker is back, where one that gave up joins as a new
 * member, which the coordinator may hold until the old member's session expires (30 s).
 */
export const CONSUMER_RETRY = { initialRetryTime: 300, maxRetryTime: 5000, retries: 12 };
const DEFAULT_BATCH = 500;

const tp = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Wakes a waiting loop early (a commit, a stop, a failure) instead of letting it poll blindly. */
class Waker {
  private wakeUp: (() => void) | null = null;
  wake(): void {
    this.wakeUp?.();
  }
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = null;
        resolve();
      }
      this.wakeUp = done;
    });
  }
}

/** Partitions with records past the group's committed offset, and their end offset now. */
async function pendingTargets(admin: Admin, groupId: string, topics: readonly string[]): Promise<Map<string, bigint>> {
  const [ends, committed] = await Promise.all([
    Promise.all(topics.map(async (topic) => (await admin.fetchTopicOffsets(topic)).map((p) => ({ topic, ...p })))),
    admin.fetchOffsets({ groupId, topics: [...topics] }),
  ]);
  const committedOf = new Map<string, bigint>();
  for (const t of committed) for (const p of t.partitions) committedOf.set(tp(t.topic, p.partition), BigInt(p.offset));
  const targets = new Map<string, bigint>();
  for (const p of ends.flat()) {
    const high = BigInt(p.high);
    const done = committedOf.get(tp(p.topic, p.partition)) ?? -1n;
    if (high > BigInt(p.low) && high > done) targets.set(tp(p.topic, p.partition), high);
  }
  return targets;
}

export function startConsumer(
  ctx: ConsumerContext,
  handler: (batch: ObservationRecord[]) => Promise<void>,
  options: ConsumeOptions,
  onEnd: () => void,
): Consumer {
  const group = options.group ?? DEFAULT_GROUP;
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH);
  const untilIdle = options.untilIdle ?? false;
  const topics = ctx.topics.observations;
  const waker = new Waker();
  /** Offsets this consumer committed (the next offset to read), by topic and partition. */
  const committedHere = new Map<string, bigint>();
  let stopping = false;
  let failure: { error: unknown } | null = null;
  let kc: KafkaConsumer | null = null;

  const fail = (error: unknown) => {
    failure ??= { error };
    waker.wake();
  };

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale, pause } = payload;
    const { topic, partition } = batch;
    let chunk: ObservationRecord[] = [];
    /** The offset of the last message read into the chunk (records or dead letters). */
    let last: string | null = null;

    const flush = async (): Promise<boolean> => {
      if (last === null) return true;
      // A rebalance or seek since the batch was fetched: its records are no longer ours to handle.
      if (!isRunning() || isStale()) return false;
      if (chunk.length > 0) {
        try {
          await handler(chunk);
        } catch (err) {
          // The handler's failure ends the consumer; nothing of this chunk is resolved, so the
          // group's next consumer gets it again. Pausing keeps kafkajs from fetching on meanwhile.
          pause();
          fail(err);
          return false;
        }
      }
      const next = BigInt(last) + 1n;
      // Errors of the commit (broker gone, rebalance) go to kafkajs, which retries or rejoins;
      // what was handled and not committed is redelivered, and ingest skips what it has seen.
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next.toString() }] }] });
      // Resolved only once committed. kafkajs fetches on from the resolved offset, and after a
      // failed commit it may keep its member and that position (it retries its fetch loop when
      // the broker comes back within its retries, without rejoining): a chunk resolved before
      // its commit failed would then never be fetched, handled and committed again, and a
      // partition whose last chunk it was would stay behind for good (an untilIdle consumer
      // never ended). Unresolved, the chunk is fetched again from the last commit.
      resolveOffset(last);
      committedHere.set(tp(topic, partition), next);
      chunk = [];
      last = null;
      waker.wake();
      await heartbeat();
      return true;
    };

    if (!isRunning() || isStale()) return;
    for (const message of batch.messages) {
      // isRunning and isStale are asked once per chunk (in flush), not per record: they cost
      // more than a small record's decoding.
      if (failure !== null || stopping) return;
      const source = sourceOf(topic, partition, message.offset);
      const value = message.value;
      let observation: Observation | null = null;
      let reason: string | null;
      if (value === null || value.length === 0) {
        reason = 'empty record (no value)';
      } else {
        try {
          // Decoding proves the schema; the domain rules are the rest of the one validation.
          observation = decodeObservation(value);
          reason = validateDecodedObservation(observation);
        } catch (err) {
          reason = err instanceof Error ? err.message : String(err);
        }
      }
      if (reason !== null || observation === null) {
        try {
          await ctx.deadLetterBytes(source, reason ?? 'not an observation', value ?? Buffer.alloc(0));
        } catch (err) {
          // The dead-letter topic is unreachable: end the consumer as a handler failure does
          // (its supervisor restarts it); nothing past the last commit is lost.
          pause();
          fail(err);
          return;
        }
      } else {
        chunk.push({ source, observation });
      }
      last = message.offset;
      if (chunk.length >= batchSize && !(await flush())) return;
    }
    if (failure === null && !stopping) await flush();
  }

  let lastAdminCheck = 0;
  async function reached(targets: Map<string, bigint>): Promise<boolean> {
    const missing = [...targets].filter(([key, high]) => (committedHere.get(key) ?? -1n) < high);
    if (missing.length === 0) return true;
    // Other members of the group may have committed the rest; ask the coordinator now and then.
    if (Date.now() - lastAdminCheck < ctx.idleCheckMs) return false;
    lastAdminCheck = Date.now();
    try {
      const admin = await ctx.admin();
      const committed = await admin.fetchOffsets({ groupId: group, topics: [...topics] });
      const groupOffsets = new Map<string, bigint>();
      for (const t of committed) for (const p of t.partitions) groupOffsets.set(tp(t.topic, p.partition), BigInt(p.offset));
      return missing.every(([key, high]) => (groupOffsets.get(key) ?? -1n) >= high);
    } catch {
      // The broker is restarting: the consumer reconnects on its own, ask again later.
      return false;
    }
  }

  async function run(): Promise<void> {
    try {
      await ctx.ensureTopics([...topics, ctx.topics.deadLetter]);
      let targets: Map<string, bigint> | null = null;
      if (untilIdle) {
        targets = await pendingTargets(await ctx.admin(), group, topics);
        // Nothing to do: end without joining the group (a join costs a rebalance).
        if (targets.size === 0) return;
      }
      if (stopping) return;
      kc = ctx.kafka.consumer({
        groupId: group,
        maxWaitTimeInMs: ctx.maxWaitMs,
        sessionTimeout: ctx.sessionTimeoutMs,
        heartbeatInterval: Math.max(100, Math.floor(ctx.sessionTimeoutMs / 10)),
        // The fetch loop's retries too (kafkajs' consumer default is 5, whatever its client's).
        retry: CONSUMER_RETRY,
      });
      kc.on(kc.events.CRASH, (e) => {
        // kafkajs restarts itself after retriable errors (a broker restart); anything else is fatal.
        if (!e.payload.restart) fail(kafkaError(e.payload.error, `consumer of group ${group}`));
      });
      await kc.connect();
      await kc.subscribe({ topics: [...topics], fromBeginning: true });
      await kc.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: ctx.concurrency, eachBatch });
      while (!stopping && failure === null) {
        await waker.wait(Math.min(ctx.idleCheckMs, 100));
        if (targets !== null && failure === null && (await reached(targets))) break;
      }
    } catch (err) {
      fail(kafkaError(err, `consuming as group ${group}`));
    } finally {
      if (kc !== null) await kc.disconnect().catch(() => {});
    }
    if (failure !== null) throw failure.error;
  }

  const done = run().finally(onEnd);
  // The caller observes `done`; this only keeps an unobserved failure from crashing the process.
  done.catch(() => {});
  return {
    async stop() {
      stopping = true;
      waker.wake();
      await done.catch(() => {});
    },
    done,
  };
}
