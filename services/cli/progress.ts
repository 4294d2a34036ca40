/**
 * Progress for long commands (crawl, replay, snapshot, the first start). A bar on a terminal;
 * elsewhere (CI logs, pipes) a line every few seconds, so a log stays readable.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, total?: number, note?: string): void;
  stop(): void;
}

export function progress(label: string, total: number, unit = 'events'): Progress {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label.padEnd(22)} {bar} {percentage}% | {value}/{total} ${unit} | {rate}/s | eta {eta_formatted} {note}`,
        stream: process.stderr,
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    const started = Date.now();
    bar.start(Math.max(total, 1), 0, { rate: 0, note: '' });
    return {
      update(done, newTotal, note = '') {
        if (newTotal !== undefined) bar.setTotal(Math.max(newTotal, 1));
        const seconds = (Date.now() - started) / 1000;
        bar.update(done, { rate: seconds > 0 ? Math.round(done / seconds) : 0, note });
      },
      stop() {
        bar.stop();
      },
    };
  }
  let last = 0;
  let current = 0;
  let max = total;
  const started = Date.now();
  const line = (final: boolean, note = '') => {
    const seconds = (Date.now() - started) / 1000;
    const pct = max > 0 ? Math.min(100, Math.round((current / max) * 100)) : 100;
    process.stderr.write(
      `${label}: ${current}/${max} ${unit} (${pct}%)${final ? ` in ${seconds.toFixed(1)} s` : ''}${note ? ` ${note}` : ''}\n`,
    );
  };
  return {
    update(done, newTotal, note) {
      current = done;
      if (newTotal !== undefined) max = newTotal;
      if (Date.now() - last > 3000) {
        last = Date.now();
        line(false, note);
      }
    },
    stop() {
      line(true);
    },
  };
}
