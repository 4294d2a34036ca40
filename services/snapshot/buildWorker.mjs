// Entry of a release build thread (buildThreads.ts). A worker does not inherit the loader hooks
// the main thread registered through tsx's API, so it registers them itself before loading
// TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./buildWorkerMain.ts');
