/**
 * The kafkajs client of the Kafka adapters: its logs routed to our logger, and its errors turned
 * into AppError at the boundary.
 */
import { createRequire } from 'node:module';
// First: kafkajs must find our modules before it loads its own (kafkajsModules.ts). Every other
// module of ours takes kafkajs from here, so none loads it first.
import { kafkajsModules } from './kafkajsModules.ts';
import { Kafka, logLevel, Partitioners, type KafkaConfig, type logCreator, type RetryOptions } from 'kafkajs';
import { AppError, isAppError } from '../../contracts/errors.ts';

/** The subset of a pino logger the Kafka adapters use. */
export interface KafkaLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface KafkaClientOptions {
  /** Bootstrap brokers, `host:port`. */
  brokers: string[];
  /** Client id the broker logs and quotas see. Default `marquee`. */
  clientId?: string;
  /**
   * Where kafkajs warnings and errors go (its info lines are logged at debug). Default: none,
   * since every failure that matters reaches the caller as an AppError anyway.
   */
  logger?: KafkaLogger;
  /** Connection timeout per broker, in ms. Default 3000. */
  connectionTimeoutMs?: number;
}

/**
 * Messages of the broker errors kafkajs retries by itself (its protocol table's `retriable`).
 * kafkajs logs every such response at error level ("This server is not the leader for that
 * topic-partition" while a new topic elects its leaders, "The coordinator is loading" on a first
 * start), then retries and succeeds: on a person's screen that reads as a failure. Those go to
 * debug; one that does not pass reaches the caller as an AppError anyway.
 */
const RETRIED_BY_KAFKAJS = new Set(
  (createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes: Array<{ retriable: boolean; message: string }> }).errorCodes
    .filter((e) => e.retriable)
    .map((e) => e.message),
);

/** Whether a client has told the log which kafkajs modules are in use (once per process). */
let toldModules = false;

/**
 * `retry`: how kafkajs retries connecting and failed requests (its default: 5 times from 0.3 s,
 * about 10 s in all); the consumers of the observation bus outlast a broker restart with more.
 */
export function createKafka(options: KafkaClientOptions, retry?: RetryOptions): Kafka {
  const { logger } = options;
  const creator: logCreator = () => ({ level, log }) => {
    if (!logger) return;
    const { message, ...rest } = log;
    const obj = { kafka: rest };
    const retried = typeof rest.error === 'string' && RETRIED_BY_KAFKAJS.has(rest.error) && message.startsWith('Response ');
    if (level === logLevel.ERROR && !retried) logger.error(obj, message);
    else if (level === logLevel.WARN) logger.warn(obj, message);
    else logger.debug(obj, message);
  };
  const config: KafkaConfig = {
    clientId: options.clientId ?? 'marquee',
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    logLevel: logger ? logLevel.WARN : logLevel.NOTHING,
    logCreator: creator,
    ...(retry === undefined ? {} : { retry }),
  };
  // Once per process, so a slower path is not silent: without a prebuilt @node-rs/crc32 for the
  // platform, or with kafkajs loaded by someone before us, kafkajs's own modules stay in use.
  if (logger && !toldModules) {
    toldModules = true;
    const ours = kafkajsModules();
    if (!Object.values(ours).every(Boolean)) {
      logger.info({ kafkajsModules: ours }, "Kafka: some of kafkajs's own modules in use (slower; see docs/kafka-event-log.md, sizing)");
    }
  }
  return new Kafka(config);
}

/**
 * A kafkajs (or socket) error as AppError `unavailable`, retriable: the broker is down, moving
 * leadership or rebalancing, and the same call may succeed later. An AppError passes unchanged.
 */
export function kafkaError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AppError('unavailable', `Kafka: ${what} failed: ${message}`, { cause: err, retriable: true });
}

/** A kafkajs client (admin, producer, consumer) connected on first use. */
export interface ConnectedOnUse<T> {
  /** The connected client; rejects with `unavailable` when connecting fails. */
  get(): Promise<T>;
  /** Forgets the client and hands it back (if it was being connected), for disconnecting. */
  take(): Promise<T> | null;
}

/** Connects once; a failed connect is forgotten so the next call tries again. */
export function connectedOnUse<T extends { connect(): Promise<void> }>(make: () => T, what: string): ConnectedOnUse<T> {
  let ready: Promise<T> | null = null;
  return {
    get() {
      if (ready === null) {
        const client = make();
        const connecting = client.connect().then(() => client);
        ready = connecting;
        connecting.catch(() => {
          if (ready === connecting) ready = null;
        });
      }
      return ready.catch((err) => {
        throw kafkaError(err, what);
      });
    },
    take() {
      const taken = ready;
      ready = null;
      return taken;
    },
  };
}

/** kafkajs's partitioners, for the modules that need one: taken from here, so kafkajs is loaded after kafkajsModules.ts. */
export { Partitioners };

/** What a kafkajs Cluster (kafkajs/src/cluster) offers that the offset reader uses. */
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** The topics whose metadata it keeps (a Set kafkajs replaces when a refresh for a new one fails). */
  readonly targetTopics: ReadonlySet<string>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  fetchTopicsOffset(topics: Array<{ topic: string; fromBeginning: boolean; partitions: Array<{ partition: number }> }>): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}

/** kafkajs's protocol value for read_committed (kafkajs/src/protocol/isolationLevel). */
const READ_COMMITTED = 1;

/** Reads a partition's latest offset in one request: see `latestOffsetReader`. */
export interface LatestOffsetReader {
  /** The partition's last stable offset (read_committed: before any open transaction), as a number. */
  latest(topic: string, partition: number): Promise<number>;
  disconnect(): Promise<void>;
}

/**
 * A partition's end offset in ONE ListOffsets request, where kafkajs's `admin.fetchTopicOffsets`
 * sends three: its admin client refreshes the cluster's metadata before every call (kafkajs
 * gives the admin's cluster no metadata age, so it is always stale), then asks for the latest
 * offset and, separately, the earliest. The Kafka event log asks for its end before every read
 * and after every commit (217 times while ingesting the sample's first day), so that was 650
 * requests where 217 do.
 *
 * kafkajs has no public call for it: this takes the cluster factory the `Kafka` instance keeps
 * for its own clients (a private symbol of kafkajs 2.x), with kafkajs's metadata age of 5
 * minutes. Returns null where that factory is missing (another kafkajs), and the caller keeps
 * `fetchTopicOffsets`. A leader that moved answers with an error: the metadata is refreshed and
 * the request sent once more.
 */
export function latestOffsetReader(kafka: Kafka): LatestOffsetReader | null {
  const factory = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  const create = factory === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[factory];
  if (typeof create !== 'function') return null;
  const cluster = connectedOnUse(
    () => create({ metadataMaxAge: 300_000, allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED }) as KafkajsCluster,
    'connecting the offset reader',
  );
  const ask = async (c: KafkajsCluster, topic: string, partition: number): Promise<number> => {
    // addTargetTopic takes a lock and copies the set on every call; asked only for a new topic.
    if (!c.targetTopics.has(topic)) await c.addTargetTopic(topic);
    const answer = await c.fetchTopicsOffset([{ topic, fromBeginning: false, partitions: [{ partition }] }]);
    const offset = answer.find((t) => t.topic === topic)?.partitions.find((p) => p.partition === partition)?.offset;
    if (offset === undefined) throw new AppError('unavailable', `Kafka answered no offset for ${topic}/${partition}`, { retriable: true });
    return Number(offset);
  };
  return {
    async latest(topic, partition) {
      const c = await cluster.get();
      try {
        return await ask(c, topic, partition);
      } catch {
        await c.refreshMetadata();
        return ask(c, topic, partition);
      }
    },
    async disconnect() {
      await cluster.take()?.then((c) => c.disconnect()).catch(() => {});
    },
  };
}
