// Entry of the projection worker thread. A worker does not inherit the loader hooks the main
// thread registered through tsx's API, so it registers them itself before loading TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./projectionWorkerMain.ts');
