/**
 * The read store's rule for what msgpack writes as a record and what as a map (readStore.ts
 * hands it to msgpackr as `useRecords`; readModelEncoder.ts writes the same forms itself).
 */

/**
 * Whether msgpack writes `object` as a record (its key set stored once among the shared
 * structures, only values in the document) or as a map (keys in the document). Records pay off
 * for objects with field names; a dictionary keyed by data (countries, languages) has another
 * key set in almost every document: they filled the 500 shared slots within the first day of the
 * sample, after which each new shape is written inline in every document that has it, slow to
 * write and to read (most of the projections' msgpack time). Decided on the first key, since
 * dictionaries hold keys of one kind. Only speed depends on it: both forms read back the same.
 */
export function isRecord(object: object): boolean {
  for (const key in object) return !isDataKey(key);
  return true;
}

/** Field names are camelCase words; country codes are upper case, language codes two letters, dates and ids have digits or '-'. */
function isDataKey(key: string): boolean {
  const first = key.charCodeAt(0);
  if (first < 0x61 || first > 0x7a) return true;
  if (key.length === 2) return !FIELDS_OF_TWO_LETTERS.has(key);
  for (let i = 1; i < key.length; i += 1) {
    const c = key.charCodeAt(i);
    if (c < 0x41 || (c > 0x5a && c < 0x61) || c > 0x7a) return true;
  }
  return false;
}

/** Field names of two letters (other two-letter keys are language codes). */
const FIELDS_OF_TWO_LETTERS = new Set(['id', 'at', 'to']);
