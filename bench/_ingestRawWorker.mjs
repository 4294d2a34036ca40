// Entry of the ingest bench's reference thread (bench/_ingestRaw.ts): registers tsx (a worker
// does not inherit the main thread's loader hooks), then loads the thread's TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./_ingestRaw.ts');
