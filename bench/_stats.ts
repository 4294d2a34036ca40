/** Small figures and options shared by the benches. */

/** The value of a bench's `--rounds`: a whole number from 1, or the bench stops with why. */
export function roundsOption(value: string): number {
  const rounds = Number(value);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a whole number from 1, not ${value}`);
  return rounds;
}

/**
 * The middle value (the lower of the two middle ones for an even count): the figure of a bench
 * run in alternated rounds (`--rounds N`), which one slow minute of a shared machine does not move.
 */
export function median(values: number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] as number;
}
