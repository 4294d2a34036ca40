/**
 * DATA_DIR made ready before anything opens a file in it, or refused in one line that says why
 * (main.ts prints an AppError's message, not a stack).
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AppError } from '../../contracts/errors.ts';
import type { Config } from './config.ts';

const codeOf = (err: unknown) => (err as { code?: unknown }).code;
const refused = (name: string, dir: string, why: string) => new AppError('invalid_parameter', `${name} ${dir} cannot be used: ${why}`);

/** DATA_DIR made, writable, or refused in one line (see ensureDirectory). */
export function ensureDataDir(dir: string): void {
  ensureDirectory(dir, 'DATA_DIR');
}

/**
 * Makes `dir` and its missing parents one level at a time; a refusal names the path as given
 * (`name`, and `shownAs` when `dir` is made under it). Why not `mkdir`'s `recursive`: Node's
 * loops for ever where making a child answers ENOENT though its parent exists (under `/proc` or
 * `/sys`), so `DATA_DIR=/proc/x` hung the start without a word, and `backup --out /proc/x` spun
 * a core.
 */
export function ensureDirectory(dir: string, name: string, shownAs: string = dir): void {
  const target = resolve(dir);
  const refuse = (why: string) => refused(name, resolve(shownAs), why);
  const missing: string[] = [];
  for (let at = target; ; at = dirname(at)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (err) {
      if (codeOf(err) !== 'ENOENT' || dirname(at) === at) throw refuse(`${at}: ${(err as Error).message}`);
      missing.unshift(at);
      continue;
    }
    if (!isDirectory) throw refuse(`${at} is a file, not a directory`);
    break;
  }
  for (const at of missing) {
    try {
      mkdirSync(at);
    } catch (err) {
      // Another process made it in the meantime: as good.
      if (codeOf(err) !== 'EEXIST') throw refuse(`making ${at}: ${(err as Error).message}`);
    }
  }
  try {
    accessSync(target, constants.W_OK);
  } catch {
    throw refuse('this user may not write in it');
  }
}

/** What a command may find in DATA_DIR's LMDB environment, unless the configuration puts it on a server. */
export type DataDirPart = 'events' | 'observations' | 'readModels' | 'apiKeys';

/** Those of `parts` the configuration keeps in DATA_DIR (the embedded default). */
export function partsInDataDir(config: Pick<Config, 'eventStore' | 'kafkaBrokers' | 'mongodbUrl'>, parts: readonly DataDirPart[]): DataDirPart[] {
  return parts.filter((part) => {
    if (part === 'events') return config.eventStore === 'lmdb';
    if (part === 'observations') return !config.kafkaBrokers;
    return !config.mongodbUrl;
  });
}

/**
 * Refuses a DATA_DIR that holds no Marquee data, for a command that reads or manages what is
 * there. Made empty on the spot, as it was, a mistyped DATA_DIR, or the default ./data taken
 * from another directory than the one Marquee runs in, answered `status`, `keys list` or
 * `dead-letters` with "none", and `keys create` made a key no running API knew.
 */
export function requireDataDir(dir: string): void {
  const target = resolve(dir);
  if (existsSync(join(target, 'lmdb'))) return;
  if (existsSync(target) && !statSync(target).isDirectory()) throw refused('DATA_DIR', target, `${target} is a file, not a directory`);
  throw new AppError(
    'invalid_parameter',
    `${target} holds no data yet (no lmdb/ in it): is DATA_DIR right? Marquee keeps its data in DATA_DIR (default ./data, from the directory it runs in), which \`marquee start\` or \`marquee crawl\` makes`,
  );
}
