/**
 * The responsiveness check of the hostile tests (hostile.support.ts) itself: it leaves out the
 * time the process waited for a core, so it must still catch every way of holding the loop.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';

/** Runs on this thread until it has used `ms` of CPU: work, as a costly request does it. */
function burnCpu(ms: number): void {
  const start = process.threadCpuUsage();
  for (;;) {
    const used = process.threadCpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe('the hostile tests\' responsiveness check', () => {
  let server: Server;
  let url: string;

  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/cpu') burnCpu(250);
      // Blocked without using a core, as a synchronous read of a slow disk blocks.
      if (req.url === '/blocked') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fails a request that holds the loop with 250 ms of CPU work', async () => {
    const probed = await probeHealthzDuring(url, fetch(`${url}/cpu`).then((r) => r.text()));
    assert.throws(() => assertResponsive(probed), /\/healthz took \d+\.\d ms \(limit 100 ms\)/);
  });

  it('fails a request that blocks the loop for 250 ms without using a core', async () => {
    const probed = await probeHealthzDuring(url, fetch(`${url}/blocked`).then((r) => r.text()));
    assert.throws(() => assertResponsive(probed), /\/healthz took/);
  });

  it('passes an attack that only waits, probing it many times', async () => {
    const probed = await probeHealthzDuring(url, new Promise((resolve) => setTimeout(resolve, 400)));
    assert.ok(probed.probes >= 3, `${probed.probes} probes`);
    assertResponsive(probed);
  });
});
