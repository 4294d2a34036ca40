/**
 * A data directory that fills up. Under a file size limit (`ulimit -f`, with SIGXFSZ ignored so a
 * write past it fails with EFBIG, as one on a full disk fails with ENOSPC) every LMDB commit
 * beyond it fails. lmdb-js then rejects promises no caller can await; before env.ts handled
 * them, the first failed commit ended the process with lmdb-js's own stack and no word of ours.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, embeddedEnv, freePort, root } from './process.ts';

/** Runs `command` (its words, shell-quoted by the caller) under a 20 MB file size limit. */
function limited(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 20480; exec ${command}`], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => ok({ code, stdout, stderr }));
  });
}

describe('a data directory that fills up (e2e)', function () {
  this.timeout(120_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-disk-full-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('fails the append whose commit failed with a retriable unavailable error, and the process lives on', async () => {
    const { code, stdout, stderr } = await limited(`"${process.execPath}" --import tsx test/e2e/diskFull.child.ts "${dataDir}"`, process.env);
    assert.equal(code, 0, stderr.slice(-2000));
    const [reported, after] = stdout.trim().split('\n');
    const failure = JSON.parse(reported as string);
    assert.equal(failure.code, 'unavailable');
    assert.equal(failure.retriable, true);
    assert.match(failure.message, /^LMDB event store: a commit failed, most likely for a full disk/);
    assert.equal(after, 'still running');
  });

  it('ends `start --sample` with one line naming a full disk, exit 1, no crash', async () => {
    const env = embeddedEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    const { code, stderr } = await limited(`"${process.execPath}" "${bin}" start --sample`, env);
    assert.equal(code, 1, stderr.slice(-2000));
    assert.match(stderr.trim().split('\n').at(-1) as string, /^marquee: .*a commit failed, most likely for a full disk or an I\/O error of the data directory/);
    assert.doesNotMatch(stderr, /^Node\.js v/m, 'no uncaught exception');
  });
});
