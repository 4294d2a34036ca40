/** Helpers of the tests that run the `marquee` command as a process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';

export const root = resolve(import.meta.dirname, '../..');
export const bin = join(root, 'bin/marquee.js');

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? ok(address.port) : fail(new Error('no port'))));
    });
  });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The exit code and whole output of `child`, once it ended. */
export function finished(child: ChildProcess): Promise<Finished> {
  return new Promise((ok) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    // 'close', not 'exit': 'exit' may come before the last of the output is read.
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

/** Runs `marquee <args>` to completion. */
export function marquee(args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  return finished(spawn(process.execPath, [bin, ...args], { env, cwd: root }));
}

/**
 * Runs `command` (its words, shell-quoted by the caller) under a file size limit of `kilobytes`,
 * which stands for a disk that fills up: SIGXFSZ is ignored, so a write past it fails with EFBIG.
 */
export function limited(command: string, env: NodeJS.ProcessEnv, kilobytes: number): Promise<Finished> {
  return finished(spawn('bash', ['-c', `trap '' XFSZ; ulimit -f ${kilobytes}; exec ${command}`], { env, cwd: root }));
}

/** Sends SIGTERM and resolves with the exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((ok) => {
    if (child.exitCode !== null) return ok(child.exitCode);
    child.once('exit', (code) => ok(code));
    child.kill('SIGTERM');
  });
}

/**
 * The environment of a `marquee` process on the embedded engines: every server URL blanked
 * (whatever the caller's shell exports), JSON logs, no secrets unless `extra` gives them.
 */
export function embeddedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LOG_FORMAT: 'json',
    KAFKA_BROKERS: '',
    EVENTSTORE_URL: '',
    EVENT_STORE: '',
    MONGODB_URL: '',
    RELEASES_S3_URL: '',
    OPENSEARCH_URL: '',
    REDIS_URL: '',
    LINK_TOKEN_KEYS: '',
    DOWNLOAD_SIGNING_KEY: '',
    ...extra,
  };
}

/** Fresh directories under the OS temp dir, all removed by `removeAll()`. */
export function scratchDirs(prefix: string): { make(): string; removeAll(): void } {
  const made: string[] = [];
  return {
    make() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    removeAll() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `dir` made an installation with nothing in it yet, as a first `marquee start` leaves it: the
 * commands that read what DATA_DIR holds refuse a directory without data (main.ts).
 */
export async function emptyInstallation(dir: string): Promise<string> {
  await lmdbReadStore({ dataDir: dir }).close();
  return dir;
}

/** Spawns `marquee <args>` and keeps everything it prints, for assertions and failure messages. */
export function spawnMarquee(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; log(): string } {
  const child = spawn(process.execPath, [bin, ...args], { env, cwd: root });
  let log = '';
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  return { child, log: () => log };
}

/**
 * The pid of the process that serves for a child running bin/marquee.js: the bin restarts itself
 * once with V8's flags (see there), so the server is the child's only child when it has one.
 */
export function servingPid(child: ChildProcess): number | undefined {
  const pid = child.pid;
  if (pid === undefined) return undefined;
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return children.length === 1 ? Number(children[0]) : pid;
  } catch {
    return pid;
  }
}
