/**
 * The deterministic order of offers inside a document: provider, add-on provider, season,
 * episode, web URL (the offer identity, docs/architecture.md). Nulls sort first, so show-level
 * links come before season and episode links. Strings compare by code unit, not locale, so every process
 * orders the same way.
 */
import type { OfferKey } from '../contracts/domain.ts';

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNullableString(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareStrings(a, b);
}

function compareNullableNumber(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a - b;
}

export function compareOfferKeys(a: OfferKey, b: OfferKey): number {
  return (
    compareStrings(a.providerId, b.providerId) ||
    compareNullableString(a.addonProviderId, b.addonProviderId) ||
    compareNullableNumber(a.seasonNumber, b.seasonNumber) ||
    compareNullableNumber(a.episodeNumber, b.episodeNumber) ||
    compareStrings(a.webUrl, b.webUrl)
  );
}
