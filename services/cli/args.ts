/** What the commands share to read their arguments (commands.ts, webhooks.ts). */
import type { parseArgs } from 'node:util';

/** A mistake in the command line: main.ts prints its message alone, as for an AppError. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The positionals of a (sub)command that takes `count` of them and no option: anything else is
 * refused as parseArgs refuses an unknown option, rather than ignored (`status --json` printed
 * the plain status, `keys revoke KEY1 KEY2` revoked KEY1 alone and said nothing of KEY2).
 */
export function onlyPositionals(parse: typeof parseArgs, args: string[], count: number, usage: string): string[] {
  const { positionals } = parse({ args, allowPositionals: count > 0, options: {} });
  if (positionals.length !== count) throw new UsageError(usage);
  return positionals;
}
