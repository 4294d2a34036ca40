/**
 * Which physical collection is a read model's live one: the alias `marquee replay` sets, but only
 * while it names a collection of the projection's own version.
 */
import assert from 'node:assert/strict';
import type { ReadStore } from '../../contracts/ports.ts';
import { liveCollection, resolveCollection } from '../../projections/collections.ts';

const links = { name: 'links', version: 2 };

describe('read-model collections', () => {
  it('follows an alias to the default collection or a rebuild of the same version', () => {
    assert.equal(liveCollection(null, links), 'links_v2');
    assert.equal(liveCollection('links_v2', links), 'links_v2');
    assert.equal(liveCollection('links_v2_rm3x9k2', links), 'links_v2_rm3x9k2');
  });

  it('starts a new version in its own collection when the alias names an older (or newer) one', () => {
    // Set by a replay of version 1: its documents have the old shape.
    assert.equal(liveCollection('links_v1_rm3x9k2', links), 'links_v2');
    assert.equal(liveCollection('links_v1', links), 'links_v2');
    assert.equal(liveCollection('links_v20_rm3x9k2', links), 'links_v2');
    assert.equal(liveCollection('links_v3', links), 'links_v2');
    assert.equal(liveCollection('other_v2', links), 'links_v2');
  });

  it('reads the alias from the store', async () => {
    const store = (alias: string | null) => ({ getAlias: async () => alias }) as unknown as ReadStore;
    assert.equal(await resolveCollection(store('links_v2_rtest'), links), 'links_v2_rtest');
    assert.equal(await resolveCollection(store('links_v1_rtest'), links), 'links_v2');
  });
});
