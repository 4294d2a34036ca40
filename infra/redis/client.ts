/**
 * The ioredis client of the shared rate-limit counters, configured so that an outage costs a
 * request nothing it can notice: a command never waits for a connection (it fails at once
 * while Redis is unreachable) and never waits long for an answer; meanwhile the client keeps
 * reconnecting on its own, so the counters are shared again as soon as Redis is back.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /** Longest wait for a command's answer, in ms, before it fails. Default 500. */
  commandTimeoutMs?: number;
  /** Longest wait for a connection to be established, in ms. Default 1000. */
  connectTimeoutMs?: number;
  /** Longest pause between two reconnection attempts, in ms. Default 1000. */
  maxReconnectDelayMs?: number;
}

export function redisClient(url: string, options: RedisClientOptions = {}): Redis {
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  const client = new Redis(url, {
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    // Without a connection, a command fails at once instead of queueing until one exists
    // (a queued command is what made requests hang while Redis was down).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect forever, quickly: the limiter goes back to the shared counters once Redis answers.
    retryStrategy: (attempt) => Math.min(attempt * 100, maxDelay),
  });
  // ioredis prints unhandled `error` events to the console; an outage is reported by the
  // dependency check (services/shared/dependencies.ts) instead.
  client.on('error', () => undefined);
  return client;
}

/**
 * The health check of a client from redisClient: a ping, after the connection being made (the
 * first, or a reconnection under way) is established. Without the offline queue a ping before
 * the connection fails at once, so the check made as the process starts reported Redis down
 * though it was up, and the rate limit counted in memory until the next check a second later:
 * the first requests of a freshly started API process were not shared. The caller bounds the
 * wait (the dependency's check timeout); a connection that fails ends it with its error.
 */
export async function checkRedis(client: Redis): Promise<void> {
  if (client.status === 'connecting' || client.status === 'connect') await once(client, 'ready');
  await client.ping();
}
