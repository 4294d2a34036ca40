/**
 * Snapshot endpoints: delegated to the snapshot service's routes when configured; until the
 * first release exists (or without that service) they answer 503 as docs/api.md documents.
 */
import { AppError } from '../../../contracts/errors.ts';
import { reqStr, str } from '../params.ts';
import type { HandlerInput, SnapshotRoutes } from '../types.ts';

function routes(input: HandlerInput): SnapshotRoutes {
  if (!input.deps.snapshots) throw new AppError('unavailable', 'No releases available yet.');
  return input.deps.snapshots;
}

export async function snapshotListing(input: HandlerInput): Promise<unknown> {
  return routes(input).listing(input.ctx);
}

export async function snapshotSchemas(input: HandlerInput): Promise<unknown> {
  if (!input.deps.snapshots) throw new AppError('unavailable', 'The snapshot schema has not been generated yet.');
  return input.deps.snapshots.schemas(input.ctx);
}

export async function snapshotDownload(input: HandlerInput): Promise<unknown> {
  const path = reqStr(input.params, 'path');
  return routes(input).download({ path, version: str(input.params, 'version') }, input.ctx);
}

export async function snapshotFile(input: HandlerInput): Promise<unknown> {
  const version = reqStr(input.params, 'version');
  const path = reqStr(input.params, 'path');
  await routes(input).file({ version, path }, input.ctx);
  return undefined;
}
