/**
 * What every role's composition root is handed by `marquee start` (services/cli/start.ts): the
 * configuration, the adapters it selected and the process's Health. A process runs any set of
 * roles; several processes of each role may share the servers.
 */
import type { Clock } from '../../contracts/ports.ts';
import type { Pipeline } from '../cli/pipeline.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Health } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';

export interface RoleContext {
  config: Config;
  logger: Logger;
  clock: Clock;
  adapters: Adapters;
  health: Health;
  pipeline: Pipeline;
}

export interface RoleHandle {
  stop(): Promise<void>;
}

/** Sleeps `ms`, or less when `signal` aborts (never rejects). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
