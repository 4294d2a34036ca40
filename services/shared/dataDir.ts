/**
 * DATA_DIR made ready before anything opens a file in it, or refused in one line that says why
 * (main.ts prints an AppError's message, not a stack).
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AppError } from '../../contracts/errors.ts';

const codeOf = (err: unknown) => (err as { code?: unknown }).code;
const refuse = (dir: string, why: string) => new AppError('invalid_parameter', `DATA_DIR ${dir} cannot be used: ${why}`);

/**
 * Makes `dir` and its missing parents one level at a time. Why not `mkdir`'s `recursive`:
 * Node's loops for ever where making a child answers ENOENT though its parent exists (under
 * `/proc` or `/sys`), so `DATA_DIR=/proc/x` hung the start without a word.
 */
export function ensureDataDir(dir: string): void {
  const target = resolve(dir);
  const missing: string[] = [];
  for (let at = target; ; at = dirname(at)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (err) {
      if (codeOf(err) !== 'ENOENT' || dirname(at) === at) throw refuse(target, `${at}: ${(err as Error).message}`);
      missing.unshift(at);
      continue;
    }
    if (!isDirectory) throw refuse(target, `${at} is a file, not a directory`);
    break;
  }
  for (const at of missing) {
    try {
      mkdirSync(at);
    } catch (err) {
      // Another process made it in the meantime: as good.
      if (codeOf(err) !== 'EEXIST') throw refuse(target, `making ${at}: ${(err as Error).message}`);
    }
  }
  try {
    accessSync(target, constants.W_OK);
  } catch {
    throw refuse(target, 'this user may not write in it');
  }
}
