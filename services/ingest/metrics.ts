/**
 * Prometheus counters of what ingest did in this process, read from its totals at each scrape:
 * what an operator alerts on (dead letters arriving, appends conflicting, the Kafka event log
 * taken over again and again) without reading logs.
 */
import { Counter, type Registry } from 'prom-client';
import type { IngestStats } from './ingest.ts';

const COUNTERS: ReadonlyArray<{ name: string; help: string; of: keyof IngestStats }> = [
  { name: 'marquee_ingest_observations_total', help: 'Observations ingest handled (appended, skipped or dead-lettered).', of: 'observations' },
  { name: 'marquee_ingest_observations_skipped_total', help: 'Observations that changed nothing: unchanged, redelivered or stale.', of: 'skipped' },
  { name: 'marquee_ingest_observations_rejected_total', help: 'Observations sent to the dead letters, each with its reason.', of: 'rejected' },
  { name: 'marquee_ingest_events_appended_total', help: 'Domain events appended to the event store.', of: 'appended' },
  { name: 'marquee_ingest_conflicts_total', help: 'Streams read again because another writer had moved them.', of: 'conflicts' },
  { name: 'marquee_ingest_takeovers_total', help: 'Appends fenced by another ingest process taking the Kafka event log over (decided again).', of: 'takeovers' },
];

export function registerIngestMetrics(registry: Registry, totals: () => IngestStats): void {
  for (const { name, help, of } of COUNTERS) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(totals()[of]);
      },
    });
  }
}
