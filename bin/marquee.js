#!/usr/bin/env node
// The `marquee` command. The code base is TypeScript run through tsx (no build step), so the
// bin registers the tsx loader and hands over to the CLI's composition root.
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
