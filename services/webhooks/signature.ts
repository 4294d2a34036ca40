/**
 * Delivery signatures: `Marquee-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * with the webhook's secret. The timestamp is signed with the body, so a receiver can refuse an
 * old delivery replayed by someone else (its tolerance is its choice).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * What a receiver runs: whether `header` signs `body` with `secret`, and (when `toleranceSeconds`
 * is given) was made within that many seconds of `nowSeconds`.
 */
export function verifySignature(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  const m = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const t = Number(m[1]);
  if (options.toleranceSeconds !== undefined && Math.abs((options.nowSeconds ?? Date.now() / 1000) - t) > options.toleranceSeconds) return false;
  const expected = Buffer.from(signatureHeader(secret, body, t).slice(-64), 'hex');
  return timingSafeEqual(expected, Buffer.from(m[2] as string, 'hex'));
}
