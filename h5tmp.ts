import { crawlSummary } from './services/crawler/catalog.ts';
for (const day of [0, 1]) { const s = crawlSummary({ day }); console.log(day, JSON.stringify(s)); }
