/**
 * `marquee webhooks create|list|delete|deliveries|replay`: webhooks are managed like API keys,
 * from the CLI, in the read store (services/webhooks/store.ts).
 */
import { encodeCursor, decodeCursor } from '../changes/feed.ts';
import { openReadStore } from '../shared/adapters.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, requestReplay, requireWebhook, webhookState } from '../webhooks/store.ts';
import type { parseArgs } from 'node:util';
import { AppError } from '../../contracts/errors.ts';
import type { Clock } from '../../contracts/ports.ts';
import type { Config } from '../shared/config.ts';

/** The part of the CLI's command context this command uses (commands.ts registers it). */
interface WebhooksContext {
  args: string[];
  config: Config;
  clock: Clock;
  parse: typeof parseArgs;
}

const usage = (why: string): AppError => new AppError('invalid_parameter', `${why}\n${USAGE}`);

const USAGE = 'webhooks create --url URL --country CC [--provider P,...] [--media ID,...] [--types new,removed,updated]'
  + ' | webhooks list | webhooks delete ID | webhooks deliveries ID [--limit N] | webhooks replay ID --since CURSOR';

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');

export async function webhooksCommand(ctx: WebhooksContext): Promise<number> {
  const [sub, ...rest] = ctx.args;
  const { readStore } = await openReadStore(ctx.config);
  try {
    if (sub === 'create') {
      const { values } = ctx.parse({
        args: rest,
        options: { url: { type: 'string' }, country: { type: 'string' }, provider: { type: 'string' }, media: { type: 'string' }, types: { type: 'string' } },
      });
      if (!values.url || !values.country) throw usage('webhooks create needs --url and --country');
      const hook = await createWebhook(readStore, {
        url: values.url, country: values.country, providers: list(values.provider), mediaIds: list(values.media), types: list(values.types),
      }, ctx.clock);
      console.log(`created webhook for ${hook.country} changes to ${hook.url}; verify each delivery's Marquee-Signature with the secret:`);
      console.log(`id: ${hook.id}`);
      console.log(`secret: ${hook.secret}`);
      return 0;
    }
    if (sub === 'list') {
      const hooks = await listWebhooks(readStore);
      if (hooks.length === 0) console.log('no webhooks yet: marquee webhooks create --url URL --country CC');
      for (const h of hooks) {
        const filters = [h.providers.length ? `providers=${h.providers.join(',')}` : '', h.mediaIds.length ? `media=${h.mediaIds.join(',')}` : '', h.types.length ? `types=${h.types.join(',')}` : '']
          .filter(Boolean).join(' ') || 'all changes';
        const state = await webhookState(readStore, h.id);
        console.log(`${h.id}  ${h.country}  ${h.url}  ${filters}  deliveries=${state.deliveries}${state.pending === null ? '' : ` retrying=#${state.pending}`}  cursor=${state.cursor === null ? 'start' : encodeCursor(state.cursor)}`);
      }
      return 0;
    }
    if (sub === 'delete') {
      const id = rest[0];
      if (!id) throw usage('webhooks delete needs the webhook id');
      await deleteWebhook(readStore, id);
      console.log(`deleted webhook ${id}`);
      return 0;
    }
    if (sub === 'deliveries') {
      const { values, positionals } = ctx.parse({ args: rest, allowPositionals: true, options: { limit: { type: 'string' } } });
      const id = positionals[0];
      if (!id) throw usage('webhooks deliveries needs the webhook id');
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
      if (!id || !values.since) throw usage('webhooks replay needs the webhook id and --since CURSOR');
      const hook = await requireWebhook(readStore, id);
      await requestReplay(readStore, id, decodeCursor(values.since, hook.country), ctx.clock);
      console.log(`webhook ${id} delivers again every change after ${values.since} (from its next look, within seconds)`);
      return 0;
    }
    throw usage('webhooks needs a subcommand:');
  } finally {
    await readStore.close();
  }
}
