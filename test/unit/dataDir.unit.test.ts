/** DATA_DIR made ready, or refused in one line (services/shared/dataDir.ts). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../contracts/errors.ts';
import { ensureDataDir } from '../../services/shared/dataDir.ts';

describe('ensureDataDir', () => {
  let scratch: string;
  beforeEach(() => (scratch = mkdtempSync(join(tmpdir(), 'marquee-datadir-'))));
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  const refusal = (dir: string) => {
    try {
      ensureDataDir(dir);
    } catch (err) {
      assert.ok(isAppError(err), String(err));
      return err.message;
    }
    throw new assert.AssertionError({ message: `${dir} was accepted` });
  };

  it('makes the directory and its missing parents, and takes one that exists', () => {
    const dir = join(scratch, 'a', 'b', 'c');
    ensureDataDir(dir);
    assert.ok(statSync(dir).isDirectory());
    ensureDataDir(dir);
  });

  it('refuses a file, or a path under one, naming it', () => {
    const file = join(scratch, 'file');
    writeFileSync(file, 'x');
    assert.equal(refusal(file), `DATA_DIR ${file} cannot be used: ${file} is a file, not a directory`);
    assert.match(refusal(join(file, 'sub')), /cannot be used: .*ENOTDIR/);
  });

  it('refuses a directory that cannot be made where mkdir -p loops for ever (under /proc on Linux), at once', () => {
    const started = Date.now();
    assert.match(refusal('/proc/marquee-no-such-dir/data'), /^DATA_DIR \/proc\/marquee-no-such-dir\/data cannot be used: making \/proc/);
    assert.ok(Date.now() - started < 1000);
  });
});
