#!/usr/bin/env node
// The `marquee` command. The code base is TypeScript run through tsx (no build step), so the
// bin registers the tsx loader and hands over to the CLI's composition root.
import { setFlagsFromString } from 'node:v8';
import { register } from 'tsx/esm/api';

// Projections and ingest allocate many short-lived objects (decoded events, folded documents):
// a larger young generation keeps them out of the old one and cuts GC time by more than half.
setFlagsFromString('--max-semi-space-size=64');

register();
await import('../services/cli/main.ts');
