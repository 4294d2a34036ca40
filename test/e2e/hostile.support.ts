/**
 * Shared by the hostile-input tests (`test/e2e/hostile.*.e2e.test.ts`): while an attack runs,
 * `/healthz` of the same process must keep answering quickly. A request or a loop that holds
 * the event loop shows up here as a slow probe.
 */
import assert from 'node:assert/strict';

export interface ProbeResult {
  /** Probes answered. */
  probes: number;
  /** Slowest probe, in ms. */
  maxMs: number;
}

/**
 * Polls `GET {baseUrl}/healthz` every `everyMs` until `during` settles, and returns the slowest
 * answer. `during`'s own result (or error) is passed through in `outcome`.
 */
export async function probeHealthzDuring<T>(baseUrl: string, during: Promise<T>, everyMs = 20): Promise<ProbeResult & { outcome: T }> {
  let done = false;
  let maxMs = 0;
  let probes = 0;
  const guarded = during.finally(() => {
    done = true;
  });
  const poller = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      maxMs = Math.max(maxMs, performance.now() - started);
      probes += 1;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  const outcome = await guarded;
  await poller;
  return { outcome, probes, maxMs };
}

/** Asserts the bound: a concurrent `/healthz` answered within `limitMs` (default 100 ms) throughout. */
export function assertResponsive(result: ProbeResult, limitMs = 100): void {
  assert.ok(result.probes > 0, 'no /healthz probe completed while the attack ran');
  assert.ok(result.maxMs < limitMs, `/healthz took ${result.maxMs.toFixed(1)} ms (limit ${limitMs} ms) while the attack ran`);
}
