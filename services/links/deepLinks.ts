/**
 * Deep links per platform for a provider's web URL: where `GET /go/{token}?platform=...`
 * sends the viewer. Deterministic (same URL and platform, same link) and total: a URL that
 * does not parse, or a platform without a mapping, gets the web URL back.
 *
 * The provider is recognised by its brand, the registrable label of the host
 * (`www.netflix.com` -> `netflix`, `play.hbomax.com` -> `hbomax`, `bbc.co.uk` -> `bbc`).
 * A few big providers have their published app identifiers in KNOWN; every other brand gets
 * identifiers derived from its domain, which a provider's own mapping can replace later.
 *
 * | platform   | link                                                                                   |
 * |------------|----------------------------------------------------------------------------------------|
 * | web        | the web URL unchanged                                                                  |
 * | ios        | `<scheme>://<host><path><query>`; scheme = KNOWN ios scheme, else the brand           |
 * | android    | `intent://<host><path><query>#Intent;scheme=https;package=<pkg>;S.browser_fallback_url=<web url>;end`; pkg = KNOWN, else the reversed domain (`com.example`) |
 * | android_tv | the android intent with the TV package (KNOWN), else the android package               |
 * | fire_tv    | the android intent with the Fire TV package (KNOWN), else the android package          |
 * | roku       | `roku://launch/<channel>?contentId=<id>`; channel = KNOWN Roku channel id, else brand; id = last path segment, or a 16-hex hash of path and query when the path is empty |
 * | webos      | `webos://launch/<app id>?contentTarget=<web url, encoded>`; app id = KNOWN, else brand |
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { Platform } from '../../contracts/domain.ts';

interface AppIds {
  ios: string;
  android: string;
  androidTv: string;
  fireTv: string;
  roku: string;
  webos: string;
}

/** Published app identifiers of the biggest providers, by brand. */
const KNOWN: Record<string, AppIds> = {
  netflix: { ios: 'nflx', android: 'com.netflix.mediaclient', androidTv: 'com.netflix.ninja', fireTv: 'com.netflix.ninja', roku: '12', webos: 'netflix' },
  youtube: { ios: 'youtube', android: 'com.google.android.youtube', androidTv: 'com.google.android.youtube.tv', fireTv: 'com.amazon.firetv.youtube', roku: '837', webos: 'youtube.leanback.v4' },
  primevideo: { ios: 'aiv', android: 'com.amazon.avod.thirdpartyclient', androidTv: 'com.amazon.amazonvideo.livingroom', fireTv: 'com.amazon.avod', roku: '13', webos: 'amazon' },
  disneyplus: { ios: 'disneyplus', android: 'com.disney.disneyplus', androidTv: 'com.disney.disneyplus', fireTv: 'com.disney.disneyplus', roku: '291097', webos: 'com.disney.disneyplus-prod' },
  hulu: { ios: 'hulu', android: 'com.hulu.plus', androidTv: 'com.hulu.livingroomplus', fireTv: 'com.hulu.plus', roku: '2285', webos: 'com.hulu.app' },
};
// Amazon's store pages and Prime Video are the same app.
KNOWN.amazon = KNOWN.primevideo as AppIds;

/** Second-level labels under which registrable domains sit one level deeper (`bbc.co.uk`). */
const SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'ac', 'or', 'ne', 'go']);

/** The registrable domain's labels, e.g. ['netflix', 'com'] or ['bbc', 'co', 'uk']. */
function registrableLabels(host: string): string[] {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  if (labels.length <= 2) return labels;
  const tld = labels[labels.length - 1] as string;
  const second = labels[labels.length - 2] as string;
  const take = tld.length === 2 && SECOND_LEVEL.has(second) ? 3 : 2;
  return labels.slice(-take);
}

/** Letters and digits only, so the brand is valid as a URL scheme and a package segment. */
function clean(label: string): string {
  const c = label.replace(/[^a-z0-9]/g, '');
  return /^[a-z]/.test(c) ? c : `app${c}`;
}

function appIdsOf(url: URL): AppIds {
  const labels = registrableLabels(url.hostname);
  const brand = clean(labels[0] ?? 'web');
  const known = KNOWN[brand];
  if (known !== undefined) return known;
  const pkg = labels.slice().reverse().map(clean).join('.');
  return { ios: brand, android: pkg, androidTv: pkg, fireTv: pkg, roku: brand, webos: brand };
}

function intent(url: URL, webUrl: string, pkg: string): string {
  return `intent://${url.host}${url.pathname}${url.search}#Intent;scheme=https;package=${pkg};S.browser_fallback_url=${encodeURIComponent(webUrl)};end`;
}

function rokuContentId(url: URL): string {
  const segments = url.pathname.split('/').filter((s) => s !== '');
  const last = segments[segments.length - 1];
  if (last !== undefined) return encodeURIComponent(decodeURIComponentSafe(last));
  const digest = sha256(new TextEncoder().encode(url.pathname + url.search));
  return Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The link a platform should open for a provider's web URL (table above). */
export function deepLink(webUrl: string, platform: Platform): string {
  if (platform === 'web') return webUrl;
  let url: URL;
  try {
    url = new URL(webUrl);
  } catch {
    return webUrl;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return webUrl;
  const ids = appIdsOf(url);
  switch (platform) {
    case 'ios':
      return `${ids.ios}://${url.host}${url.pathname}${url.search}`;
    case 'android':
      return intent(url, webUrl, ids.android);
    case 'android_tv':
      return intent(url, webUrl, ids.androidTv);
    case 'fire_tv':
      return intent(url, webUrl, ids.fireTv);
    case 'roku':
      return `roku://launch/${ids.roku}?contentId=${rokuContentId(url)}`;
    case 'webos':
      return `webos://launch/${ids.webos}?contentTarget=${encodeURIComponent(webUrl)}`;
    default:
      return webUrl;
  }
}
