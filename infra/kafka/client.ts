/**
 * The kafkajs client of the Kafka adapters: its logs routed to our logger, and its errors turned
 * into AppError at the boundary.
 */
import { Kafka, logLevel, type KafkaConfig, type logCreator } from 'kafkajs';
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

export function createKafka(options: KafkaClientOptions): Kafka {
  const { logger } = options;
  const creator: logCreator = () => ({ level, log }) => {
    if (!logger) return;
    const { message, ...rest } = log;
    const obj = { kafka: rest };
    if (level === logLevel.ERROR) logger.error(obj, message);
    else if (level === logLevel.WARN) logger.warn(obj, message);
    else logger.debug(obj, message);
  };
  const config: KafkaConfig = {
    clientId: options.clientId ?? 'marquee',
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    logLevel: logger ? logLevel.WARN : logLevel.NOTHING,
    logCreator: creator,
  };
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
