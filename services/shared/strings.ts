/**
 * `text` in a string of its own. msgpackr decodes a document's short strings with one native
 * call and slices them out of the result, and V8 makes a slice of 13 characters or more a view
 * that keeps the whole decoded run alive: a string kept long after its document was read (a
 * show's id in the release's media pass, a URL in the link-token cache) would keep its document's
 * strings too (hundreds of MB of old space at 250,000 titles). Joining to a space flattens into
 * a new string; the slice of that holds only it.
 */
export function ownCopy(text: string): string {
  return (' ' + text).slice(1);
}
