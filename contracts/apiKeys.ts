/** Pure rules of API keys shared by the key store adapters. */
import type { ApiKeyRecord } from './ports.ts';

/** The order of `ApiKeyStore.list`: oldest first, then by id. */
export function byCreation(a: ApiKeyRecord, b: ApiKeyRecord): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
