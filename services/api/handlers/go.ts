/** GET /go/{link_token}: the redirect behind every streaming link; the raw URL is only here. */
import type { Platform } from '../../../contracts/domain.ts';
import { AppError } from '../../../contracts/errors.ts';
import { reqStr } from '../params.ts';
import type { HandlerInput } from '../types.ts';

export async function follow({ params, deps, ctx }: HandlerInput): Promise<unknown> {
  const token = reqStr(params, 'link_token');
  const platform = reqStr(params, 'platform') as Platform;
  let url: string | null;
  try {
    url = deps.linkTokens.decode(token);
  } catch {
    // A malformed token (bad base58, truncated) is just a token that does not decrypt.
    url = null;
  }
  if (url === null) throw new AppError('not_found', 'This link is unknown or has expired.');
  ctx.status = 302;
  ctx.redirect(deps.linkTokens.deepLink(url, platform));
  // Each token always leads to the same place, but a link may change platform targets: keep it short-lived.
  ctx.set('Cache-Control', 'private, max-age=300');
  return undefined;
}
