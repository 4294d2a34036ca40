/**
 * `marquee webhooks create|list|delete|deliveries|replay`: webhooks are managed like API keys,
 * from the CLI, in the read store (services/webhooks/store.ts).
 */
import { committedPosition, decodeCursor, encodeCursor, feedSourceOf } from '../changes/feed.ts';
import { openReadStore } from '../shared/adapters.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, pendingReplays, requestReplay, requireWebhook, webhookState } from '../webhooks/store.ts';
import type { parseArgs } from 'node:util';
import { AppError } from '../../contracts/errors.ts';
import { onlyPositionals } from './args.ts';
import type { Clock } from '../../contracts/ports.ts';
import type { Config } from '../shared/config.ts';
import { resolveCollection } from '../shared/readModels.ts';
import { providersProjection } from '../../projections/providers.ts';
import type { ProvidersDoc } from '../../contracts/readModels.ts';
import type { ReadStore } from '../../contracts/ports.ts';

/** The part of the CLI's command context this command uses (commands.ts registers it). */
interface WebhooksContext {
  args: string[];
  config: Config;
  clock: Clock;
  parse: typeof parseArgs;
}

const usage = (why: string): AppError => new AppError('invalid_parameter', `${why}\n${USAGE}`);

const USAGE = 'webhooks create --url URL --country CC [--provider P,...] [--media ID,...] [--types new,removed,updated] [--since CURSOR]'
  + ' | webhooks list | webhooks delete ID | webhooks deliveries ID [--limit N] | webhooks replay ID --since CURSOR';

/**
 * The feed key a --since cursor names. Every cursor up to the feed's end is one: a cursor past
 * it would have the webhook deliver nothing, and say nothing, until the feed got there (a typo:
 * for ever).
 */
async function cursorInFeed(readStore: ReadStore, cursor: string, country: string): Promise<string> {
  const key = decodeCursor(cursor, country);
  const end = await committedPosition(feedSourceOf(readStore));
  if (Number(cursor) > end) {
    throw new AppError('invalid_parameter', `--since ${cursor} is past the end of the change feed (${String(end).padStart(16, '0')}): the webhook would deliver nothing until the feed got there; take a cursor from /v1/changes or webhooks deliveries`);
  }
  return key;
}

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');

/**
 * What the catalog says of a new webhook's country and providers. A country or provider the
 * catalog does not know yet is taken (a crawler may publish it tomorrow), but a typo (UK for
 * GB, a provider's name for its id) would otherwise wait for changes that never come, silently.
 */
async function filterNotes(readStore: ReadStore, country: string, providers: readonly string[]): Promise<string[]> {
  const doc = await readStore.get<ProvidersDoc>(await resolveCollection(readStore, providersProjection), country);
  const known = new Set((doc?.doc.providers ?? []).map((p) => p.id));
  if (known.size === 0) return [`the catalog has no offers in ${country} yet: this webhook delivers once changes there are ingested (a typo? The United Kingdom is GB)`];
  const unknown = providers.filter((p) => !known.has(p));
  if (unknown.length === 0) return [];
  const one = unknown.length === 1;
  return [
    `${one ? 'no provider' : 'no providers'} ${unknown.join(', ')} in ${country} yet: ${one ? 'its' : 'their'} changes are delivered once ${one ? 'it appears' : 'they appear'}`
      + ` (a typo? Provider ids are as GET /v1/providers?country=${country} lists them, such as ${[...known].slice(0, 3).join(', ')})`,
  ];
}

export async function webhooksCommand(ctx: WebhooksContext): Promise<number> {
  const [sub, ...rest] = ctx.args;
  const { readStore } = await openReadStore(ctx.config);
  try {
    if (sub === 'create') {
      const { values } = ctx.parse({
        args: rest,
        options: {
          url: { type: 'string' }, country: { type: 'string' }, provider: { type: 'string' }, media: { type: 'string' }, types: { type: 'string' },
          since: { type: 'string' },
        },
      });
      if (!values.url || !values.country) throw usage('webhooks create needs --url and --country');
      const since = values.since === undefined ? undefined : await cursorInFeed(readStore, values.since, values.country.toUpperCase());
      const hook = await createWebhook(readStore, {
        url: values.url, country: values.country, providers: list(values.provider), mediaIds: list(values.media), types: list(values.types),
        ...(since === undefined ? {} : { since }),
      }, ctx.clock);
      console.log(`created webhook for ${hook.country} changes to ${hook.url}; verify each delivery's Marquee-Signature with the secret:`);
      console.log(`id: ${hook.id}`);
      console.log(`secret: ${hook.secret}`);
      console.log(values.since === undefined
        ? 'it delivers the changes from now on (--since 0000000000000000 would deliver the whole history, or replay it later)'
        : `it delivers the changes after cursor ${values.since}`);
      for (const note of await filterNotes(readStore, hook.country, hook.providers)) console.error(`note: ${note}`);
      return 0;
    }
    if (sub === 'list') {
      onlyPositionals(ctx.parse, rest, 0, 'webhooks list takes no arguments');
      const hooks = await listWebhooks(readStore);
      if (hooks.length === 0) console.log('no webhooks yet: marquee webhooks create --url URL --country CC');
      for (const h of hooks) {
        const filters = [h.providers.length ? `providers=${h.providers.join(',')}` : '', h.mediaIds.length ? `media=${h.mediaIds.join(',')}` : '', h.types.length ? `types=${h.types.join(',')}` : '']
          .filter(Boolean).join(' ') || 'all changes';
        const state = await webhookState(readStore, h.id);
        // A start or replay not yet taken up by a worker is where the webhook goes on from.
        const { latest } = await pendingReplays(readStore, h.id);
        const cursor = (key: string | null) => (key === null ? 'start' : encodeCursor(key));
        const at = latest === null ? cursor(state.cursor) : `${cursor(latest.cursor)} (at the worker's next look)`;
        console.log(`${h.id}  ${h.country}  ${h.url}  ${filters}  deliveries=${state.deliveries}${state.pending === null ? '' : ` retrying=#${state.pending}`}  cursor=${at}`);
      }
      return 0;
    }
    if (sub === 'delete') {
      const [id] = onlyPositionals(ctx.parse, rest, 1, 'webhooks delete needs the webhook id, and nothing else') as [string];
      await deleteWebhook(readStore, id);
      console.log(`deleted webhook ${id}`);
      return 0;
    }
    if (sub === 'deliveries') {
      const { values, positionals } = ctx.parse({ args: rest, allowPositionals: true, options: { limit: { type: 'string' } } });
      const id = positionals[0];
      if (!id || positionals.length > 1) throw usage('webhooks deliveries needs the webhook id, and no other argument');
      await requireWebhook(readStore, id);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      // As every --limit of the CLI: a typo is said, not read as "no deliveries yet".
      if (!Number.isInteger(limit) || limit < 0) throw new AppError('invalid_parameter', `--limit takes a non-negative integer, got "${values.limit}"`);
      const deliveries = await listDeliveries(readStore, id, limit);
      if (deliveries.length === 0) console.log('no deliveries yet');
      for (const d of deliveries) {
        console.log(`${d.id}  ${d.state}  ${d.changeIds.length} changes  created ${d.createdAt}  until cursor ${encodeCursor(d.until)}`);
        for (const a of d.attempts) console.log(`  ${a.at}  status ${a.status ?? '-'}  ${a.latencyMs} ms${a.error ? `  ${a.error}` : ''}  by ${a.holder}`);
      }
      return 0;
    }
    if (sub === 'replay') {
      const { values, positionals } = ctx.parse({ args: rest, allowPositionals: true, options: { since: { type: 'string' } } });
      const id = positionals[0];
      if (!id || !values.since || positionals.length > 1) throw usage('webhooks replay needs the webhook id and --since CURSOR, and no other argument');
      const hook = await requireWebhook(readStore, id);
      await requestReplay(readStore, id, await cursorInFeed(readStore, values.since, hook.country), ctx.clock);
      console.log(`webhook ${id} delivers again every change after ${values.since} (from its next look, within seconds)`);
      return 0;
    }
    throw usage('webhooks needs a subcommand:');
  } finally {
    await readStore.close();
  }
}
