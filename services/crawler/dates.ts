/** Calendar helpers on whole UTC days ("epoch days": days since 1970-01-01). */

const DAY_MS = 86_400_000;

const dayCache = new Map<string, number>();

/** Epoch day of a `YYYY-MM-DD` date; asked for every listing's release date, so remembered. */
export function epochDayOf(date: string): number {
  let day = dayCache.get(date);
  if (day === undefined) {
    day = Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
    // Bounded: a few centuries of dates at most in any crawl.
    if (dayCache.size < 200_000) dayCache.set(date, day);
  }
  return day;
}

const dateCache = new Map<number, string>();

export function dateOfEpochDay(day: number): string {
  let date = dateCache.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_MS).toISOString().slice(0, 10);
    // Bounded: a few centuries of days at most.
    if (dateCache.size < 200_000) dateCache.set(day, date);
  }
  return date;
}

/**
 * `new Date(ms).toISOString()` for a run of close instants: the text of the latest second is
 * kept and only its milliseconds are written. A crawl stamps each record a millisecond after the
 * one before, and a Date formatted per record was a tenth of its generation time.
 */
export function isoTimestamps(): (ms: number) => string {
  let second = Number.NaN;
  // The second's timestamp without its `000Z`.
  let head = '';
  return (ms) => {
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      head = new Date(s * 1000).toISOString().slice(0, -4);
      second = s;
    }
    const milli = ms - s * 1000;
    return `${head}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
}

export function yearOfEpochDay(day: number): number {
  return new Date(day * DAY_MS).getUTCFullYear();
}

/** Day of the week, 0 = Sunday. */
export function weekdayOfEpochDay(day: number): number {
  return new Date(day * DAY_MS).getUTCDay();
}

const MONTHS: Record<string, number> = {
  Jan: 1, Feb: 2, Mar: 3, Apr: 4, May: 5, Jun: 6, Jul: 7, Aug: 8, Sep: 9, Oct: 10, Nov: 11, Dec: 12,
};

/**
 * vega-datasets release dates (`Jun 12 1998`) as `YYYY-MM-DD`. The data set stores two-digit
 * years expanded into the wrong century for old films (`Gone with the Wind`: `Dec 15 2039`), so
 * a year after `latestYear` is moved back a hundred years. Null when the value does not parse.
 */
export function parseVegaDate(value: unknown, latestYear: number): string | null {
  if (typeof value !== 'string') return null;
  const m = /^([A-Z][a-z]{2}) (\d{1,2}) (\d{4})$/.exec(value.trim());
  if (!m) return null;
  const month = MONTHS[m[1] as string];
  if (month === undefined) return null;
  let year = Number(m[3]);
  if (year > latestYear) year -= 100;
  const date = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(Number(m[2])).padStart(2, '0')}`;
  const parsed = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date) return null;
  return date;
}
