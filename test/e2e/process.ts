/** Helpers of the tests that run the `marquee` command as a process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

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

/** Runs `marquee <args>` to completion. */
export function marquee(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [bin, ...args], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => ok({ code, stdout, stderr }));
  });
}

/** Sends SIGTERM and resolves with the exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((ok) => {
    if (child.exitCode !== null) return ok(child.exitCode);
    child.once('exit', (code) => ok(code));
    child.kill('SIGTERM');
  });
}
