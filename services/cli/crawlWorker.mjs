// Entry of the crawl worker thread (see crawlThread.ts). A worker does not inherit the loader
// hooks the main thread registered through tsx's API, so it registers them itself.
import { register } from 'tsx/esm/api';

register();
await import('./crawlWorkerMain.ts');
