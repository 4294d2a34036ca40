/**
 * Marks of "seen in this pass" per small integer (a title's slot, an engine's short id), reused
 * from pass to pass without clearing: a mark counts only when it holds the current pass's number.
 * Why: the search index adds up thousands of titles' hits per query in arrays indexed by title;
 * clearing those arrays, or a Map entry per title, would cost more than the query's own work.
 */
export class Stamps {
  marks = new Uint32Array(0);
  pass = 0;

  /**
   * Starts a pass over integers below `size`. True when the marks were regrown (so must be the
   * caller's arrays beside them: their old values are no one's).
   */
  begin(size: number): boolean {
    let grown = false;
    if (this.marks.length < size) {
      this.marks = new Uint32Array(Math.max(size, this.marks.length * 2, 1024));
      this.pass = 0;
      grown = true;
    }
    this.pass += 1;
    if (this.pass === 0xffffffff) {
      this.marks.fill(0);
      this.pass = 1;
    }
    return grown;
  }

  has(i: number): boolean {
    return this.marks[i] === this.pass;
  }

  mark(i: number): void {
    this.marks[i] = this.pass;
  }

  unmark(i: number): void {
    this.marks[i] = 0;
  }
}
