/**
 * Logs that speak to a person on a terminal (pino-pretty) and stay JSON lines elsewhere.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  const pretty = process.stderr.isTTY && process.env.LOG_FORMAT !== 'json';
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
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
