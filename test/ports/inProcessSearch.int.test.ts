import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { searchIndexSuite } from './searchIndex.suite.ts';

searchIndexSuite('in-process (MiniSearch)', async () => inProcessSearchIndex());
