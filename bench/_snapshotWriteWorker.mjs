// Entry of a write-phase thread of bench/_snapshotWrite.ts: registers tsx (a worker does not
// inherit the main thread's loader hooks), then loads the thread's TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./_snapshotWriteThread.ts');
