/**
 * Hostile input to a deployment: the development link key ships in the repository, so anyone
 * can seal `https://evil.example/phish` with it. Outside `--sample` it must open nothing, and a
 * deployment that forgot a secret must not start at all.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLinkTokens, DEVELOPMENT_LINK_KEY_HEX } from '../../services/links/linkTokens.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';
import { embeddedEnv, emptyInstallation, freePort, marquee, scratchDirs, servingPid, spawnMarquee, stop } from './process.ts';

const KEY_HEX = '5a'.repeat(32);
const EVIL = 'https://evil.example/phish';

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

describe('hostile: development secrets outside --sample (e2e)', function () {
  this.timeout(120_000);
  const dirs = scratchDirs('marquee-hostile-ops-');
  const base = embeddedEnv({ LOG_LEVEL: 'info' });

  after(() => dirs.removeAll());

  /** A data directory that does not exist yet (so a test can tell nothing was written). */
  function dataDir(): string {
    return join(dirs.make(), 'data');
  }

  it('refuses to start without LINK_TOKEN_KEYS or DOWNLOAD_SIGNING_KEY: one line naming the variable, non-zero exit, nothing loaded', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /^marquee: LINK_TOKEN_KEYS and DOWNLOAD_SIGNING_KEY are not set: .*--sample/],
      [{ DOWNLOAD_SIGNING_KEY: 'k'.repeat(32) }, /^marquee: LINK_TOKEN_KEYS is not set: /],
      [{ LINK_TOKEN_KEYS: `1:${KEY_HEX}` }, /^marquee: DOWNLOAD_SIGNING_KEY is not set: /],
    ];
    for (const [vars, message] of cases) {
      const dir = dataDir();
      const port = await freePort();
      const started = Date.now();
      const result = await marquee(['start'], { ...base, ...vars, DATA_DIR: dir, PORT: String(port) });
      assert.equal(result.code, 1, `${JSON.stringify(vars)}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.split('\n').filter(Boolean).length, 1, `one line: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.ok(Date.now() - started < 20_000, 'refused at once');
      assert.equal(existsSync(dir), false, 'nothing written: no store opened, no sample loaded, no key file made up');
    }
  });

  it('does not build a release on the development key without --sample', async () => {
    const result = await marquee(['snapshot', 'build'], { ...base, DATA_DIR: await emptyInstallation(dataDir()) });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr.trimEnd().split('\n').at(-1) ?? '', /^marquee: LINK_TOKEN_KEYS is not set: /);
  });

  it('with the keys set and no --sample: loads nothing, and a token forged with the development key gets 404 from /go', async () => {
    const dir = dataDir();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...base, DATA_DIR: dir, PORT: String(port), LINK_TOKEN_KEYS: `1:${KEY_HEX}`, DOWNLOAD_SIGNING_KEY: 'k'.repeat(32) };
    const { child: server, log } = spawnMarquee(['start'], env);
    try {
      const started = Date.now();
      while ((await fetch(`${url}/readyz`).catch(() => null))?.status !== 200) {
        if (server.exitCode !== null || Date.now() - started > 60_000) throw new Error(`not ready:\n${log().slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.doesNotMatch(log(), /sample|development keys/i, 'no sample loaded, no development key in use');

      // Forged: the repository's key, same version byte as the configured one.
      const forged = createLinkTokens({ keys: [{ version: 1, key: hexBytes(DEVELOPMENT_LINK_KEY_HEX) }] }).encode(EVIL);
      const attack = await probeHealthzDuring(url, fetch(`${url}/go/${forged}`, { redirect: 'manual' }), { serverPid: servingPid(server) });
      assertResponsive(attack);
      assert.equal(attack.outcome.status, 404);
      assert.equal(attack.outcome.headers.get('location'), null);

      // The same URL sealed with the configured key is followed: the 404 is the key's doing.
      const genuine = createLinkTokens({ keys: [{ version: 1, key: hexBytes(KEY_HEX) }] }).encode(EVIL);
      const followed = await fetch(`${url}/go/${genuine}`, { redirect: 'manual' });
      assert.equal(followed.status, 302);
      assert.equal(followed.headers.get('location'), EVIL);
    } finally {
      assert.equal(await stop(server), 0, log().slice(-2000));
    }
    const status = await marquee(['status'], env);
    assert.match(status.stdout, /event store head position: 0\n/, 'start without --sample loaded nothing');
    assert.ok(!readdirSync(dir).includes('download-signing.key'), 'no development signing key made up');
  });
});
