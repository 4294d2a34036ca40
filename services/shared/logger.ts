/**
 * Logs that speak to a person on a terminal (pino-pretty) and stay JSON lines elsewhere.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

/** `json`: JSON lines even on a terminal (`LOG_FORMAT=json`, read by config.ts). */
export function createLogger(options: { level?: string; name?: string; json?: boolean } = {}): Logger {
  const pretty = process.stderr.isTTY && options.json !== true;
  return pino(
    {
      level: options.level ?? 'info',
      name: options.name ?? 'marquee',
      base: undefined,
    },
    pretty
      ? pino.transport({ target: 'pino-pretty', options: { destination: 2, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' } })
      : pino.destination(2),
  );
}

/** A logger that drops everything, for tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
