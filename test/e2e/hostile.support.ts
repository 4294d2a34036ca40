/**
 * Shared by the hostile-input tests (`test/e2e/hostile.*.e2e.test.ts`): while an attack runs,
 * `/healthz` of the serving process must keep answering quickly. A request or a loop that holds
 * the event loop shows up here as a slow probe.
 *
 * A probe's time leaves out what the threads on its path spent waiting for a core: on two busy
 * cores a process can sit runnable for hundreds of milliseconds (a 300 ms busy loop got 66 ms of
 * CPU at load 7), which is the machine's doing, not the loop being held. Linux counts that wait
 * per thread (schedstat's run delay, in ns). Work that holds the loop (CPU, GC, blocking I/O)
 * is still counted in full: a thread doing it is running or blocked, not waiting for a core.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

export interface ProbeResult {
  /** Probes answered. */
  probes: number;
  /** Slowest probe, in ms, less the time its threads waited for a core. */
  maxMs: number;
  /** That probe's wall time and wait, in ms. */
  slowest: { wallMs: number; waitedMs: number };
}

/** How long the main thread of `pid` has waited for a core so far, in ms; 0 where Linux does not say. */
function waitedForCoreMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

/**
 * Polls `GET {baseUrl}/healthz` every `everyMs` until `during` settles, and returns the slowest
 * answer. `during`'s own result (or error) is passed through in `outcome`. `serverPid` names the
 * serving process when it is not this one (see servingPid in process.ts).
 */
export async function probeHealthzDuring<T>(
  baseUrl: string,
  during: Promise<T>,
  options: { serverPid?: number; everyMs?: number } = {},
): Promise<ProbeResult & { outcome: T }> {
  const pids = [...new Set([process.pid, options.serverPid ?? process.pid])];
  let done = false;
  let maxMs = 0;
  let slowest = { wallMs: 0, waitedMs: 0 };
  let probes = 0;
  const guarded = during.finally(() => {
    done = true;
  });
  const poller = (async () => {
    while (!done) {
      const waitedBefore = pids.map(waitedForCoreMs);
      const started = performance.now();
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      const wallMs = performance.now() - started;
      // The larger of the two waits: they may overlap, so their sum could discount too much.
      const waitedMs = Math.max(...pids.map((pid, i) => waitedForCoreMs(pid) - (waitedBefore[i] ?? 0)));
      const ms = Math.max(0, wallMs - waitedMs);
      if (ms > maxMs) [maxMs, slowest] = [ms, { wallMs, waitedMs }];
      probes += 1;
      await new Promise((r) => setTimeout(r, options.everyMs ?? 20));
    }
  })();
  const outcome = await guarded;
  await poller;
  return { outcome, probes, maxMs, slowest };
}

/** Asserts the bound: a concurrent `/healthz` answered within `limitMs` (default 100 ms) throughout. */
export function assertResponsive(result: ProbeResult, limitMs = 100): void {
  assert.ok(result.probes > 0, 'no /healthz probe completed while the attack ran');
  const { wallMs, waitedMs } = result.slowest;
  assert.ok(
    result.maxMs < limitMs,
    `/healthz took ${result.maxMs.toFixed(1)} ms (limit ${limitMs} ms) while the attack ran: ${wallMs.toFixed(1)} ms of wall time, ${waitedMs.toFixed(1)} of them waiting for a core`,
  );
}

/** The parent of `pid` and whether it is stopped, from /proc (Linux, as the local servers are). */
function parentOf(pid: number): { ppid: number; stopped: boolean } | null {
  try {
    // Fields after the command's closing parenthesis: state, ppid, ...
    const after = (text: string) => text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(after(readFileSync(`/proc/${pid}/stat`, 'utf8'))[1]);
    if (!Number.isInteger(ppid) || ppid <= 1) return null;
    return { ppid, stopped: after(readFileSync(`/proc/${ppid}/stat`, 'utf8'))[0] === 'T' };
  } catch {
    return null;
  }
}

/**
 * Resumes a server frozen with SIGSTOP, and its parent when that stopped itself with its child:
 * runuser, which starts OpenSearch (infra/local/opensearch.sh), does so, and left stopped it never
 * reaped the JVM, so the servers' shutdown waited a minute on a zombie and the run left both
 * behind.
 */
export function resumeServer(pid: number): void {
  process.kill(pid, 'SIGCONT');
  const parent = parentOf(pid);
  if (parent?.stopped) process.kill(parent.ppid, 'SIGCONT');
}
