/** ISO 8601 weeks: release labels `<ISO year>-W<ww>` and the days they cover. */
import { AppError } from '../../contracts/errors.ts';
import { RELEASE_VERSION_PATTERN } from '../../contracts/snapshotSchema.ts';

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC instant. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The ISO week label of a UTC instant: the week's Thursday decides the year. */
export function isoWeekLabel(at: Date): string {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
  const thursday = day + (3 - weekday) * DAY_MS;
  const year = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** Monday (UTC midnight, ms) of an ISO week label; throws `invalid_parameter` for a malformed or non-existent week. */
export function weekStart(label: string): number {
  if (!RELEASE_VERSION_PATTERN.test(label)) {
    throw new AppError('invalid_parameter', `A release version is <ISO year>-W<two-digit week>, e.g. 2026-W47; got "${label}".`, {
      details: { parameter: 'version' },
    });
  }
  const year = Number(label.slice(0, 4));
  const week = Number(label.slice(6));
  // 4 January is always in week 1.
  const jan4 = Date.UTC(year, 0, 4);
  const monday1 = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY_MS;
  const start = monday1 + (week - 1) * 7 * DAY_MS;
  if (isoWeekLabel(new Date(start)) !== label) {
    throw new AppError('invalid_parameter', `${label} does not exist (the year has 52 weeks).`, { details: { parameter: 'version' } });
  }
  return start;
}

/**
 * The week a build releases: `week`, or the clock's ISO week when none is given. Refuses a
 * malformed label, and a week to come: releases are immutable and the newest label is the
 * latest, so a mistyped year would be served as the latest release, and never pruned, until
 * that week.
 */
export function releaseWeek(week: string | undefined, clock: { now(): Date }): string {
  const thisWeek = isoWeekLabel(clock.now());
  const version = week ?? thisWeek;
  if (weekStart(version) > weekStart(thisWeek)) {
    throw new AppError('invalid_parameter', `release week ${version} is after this week (${thisWeek}, UTC): a week is released once it has come`, {
      details: { parameter: 'week' },
    });
  }
  return version;
}

/**
 * The seven days a release's trending file covers: the week's Monday to Sunday, or, when the
 * release is built before its Sunday, the seven days ending on the build day (so a mid-week
 * build still carries a full week of movement).
 */
export function trendingDays(label: string, now: Date): string[] {
  const sunday = weekStart(label) + 6 * DAY_MS;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const last = Math.min(sunday, today);
  return Array.from({ length: 7 }, (_, i) => isoDate(last - (6 - i) * DAY_MS));
}

/** RFC 3339 UTC without fractional seconds, e.g. `2026-11-21T08:00:00Z`. */
export function rfc3339(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
