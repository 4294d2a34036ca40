/**
 * `marquee <command>`: the CLI's composition root. Reads the configuration once, opens the
 * adapters it selects, and hands them to the command. Every command works while `start` runs
 * on the same data directory (LMDB takes several processes).
 */
import { parseArgs } from 'node:util';
import { isAppError } from '../../contracts/errors.ts';
import { systemClock } from '../../contracts/ports.ts';
import { loadConfig, parseRoles } from '../shared/config.ts';
import { ensureDataDir, partsInDataDir, requireDataDir } from '../shared/dataDir.ts';
import { createLogger } from '../shared/logger.ts';
import { UsageError } from './args.ts';
import { commands, dataDirParts } from './commands.ts';
import { startCommand } from './start.ts';

const USAGE = `Marquee: streaming-availability catalog, /v1 API and weekly Parquet releases.

Usage: marquee <command> [options]

Commands:
  start [--sample] [--roles api,ingest,projector,scheduler]
                                 the given roles (default all) in one process; API on $HOST:$PORT (default 127.0.0.1:8080),
                                 data in $DATA_DIR (default ./data); run several processes of each role on shared servers.
                                 Needs LINK_TOKEN_KEYS and DOWNLOAD_SIGNING_KEY; --sample (npm start) loads the sample
                                 catalog into an empty data directory and lets development keys stand in for unset ones
  crawl [--day N] [--titles N] [--countries US,DE] [--seed N] [--start-date YYYY-MM-DD] [--publish-only]
                                 publish a crawl of the sample (or a synthetic N-title) catalog, then ingest and project it
  rank --date YYYY-MM-DD         run the daily ranking job for a day
  replay <projection>            rebuild a read model from position 0 into a new version and switch it live
  replay --module FILE --out FILE.ndjson
                                 run your own projection over the whole history and write its documents
  status                         running processes (loops, state, restarts, last error);
                                 per projection: position, lag; events per type; parked events
  dead-letters [--limit N]       observations refused by ingest, with the reason
  parked list [--projection P]   events whose read-model write kept failing, parked so the projection went on
  parked retry [--projection P] [POSITION]
                                 re-apply parked events (all, or the document holding POSITION) and unpark them
  keys create --name NAME        create an API key (printed once, alone on the last line)
  keys revoke KEY|PREFIX         revoke a key at once
  keys list                      list keys (prefix, name, created, revoked)
  snapshot build [--week YYYY-Www] [--sample]
                                 build and publish the weekly Parquet release (LINK_TOKEN_KEYS; --sample: the development key)
  webhooks create --url URL --country CC [--provider P,...] [--media ID,...] [--types new,removed,updated] [--since CURSOR]
                                 create a webhook for a country's changes from now on, or after --since (prints its id
                                 and signing secret)
  webhooks list | delete ID | deliveries ID | replay ID --since CURSOR
                                 list, delete, see the delivery log of, or re-deliver from a /v1/changes cursor
  backup --out DIR               a consistent copy of $DATA_DIR (event log, read models, keys, inbox, releases) while
                                 Marquee runs; start from it with DATA_DIR=DIR

Environment: KAFKA_BROKERS, EVENTSTORE_URL, MONGODB_URL, OPENSEARCH_URL, REDIS_URL switch a part to its server.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, json: config.logJson });
  if (command === 'start') {
    const { values } = usage(() => parseArgs({ args: rest, options: { sample: { type: 'boolean', default: false }, roles: { type: 'string' } } }));
    const roles = usage(() => parseRoles(values.roles));
    await startCommand({ ...config, roles }, logger, systemClock, { sample: values.sample });
    // Everything is closed; a handle a driver forgot must not keep a stopped server alive.
    setTimeout(() => process.exit(process.exitCode ?? 0), 5000).unref();
    return 0;
  }
  const run = commands[command];
  if (!run) {
    console.error(`marquee: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  // Where the command reads what DATA_DIR holds, a DATA_DIR without data is refused, not made.
  if (partsInDataDir(config, dataDirParts[command] ?? []).length > 0) requireDataDir(config.dataDir);
  ensureDataDir(config.dataDir);
  // A command's unknown option or missing value is a usage error: one line, not a stack.
  const parse = ((options) => usage(() => parseArgs(options))) as typeof parseArgs;
  return run({ args: rest, config, logger, clock: systemClock, parse });
}

/** An argument parser's error (unknown option...) reported as a usage error: one line, not a stack. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A person reads this: the message, not a stack, for errors we expect.
    if (isAppError(err) || (err instanceof Error && err.name === 'UsageError')) {
      console.error(`marquee: ${err.message}`);
    } else {
      console.error(err);
    }
    process.exitCode = 1;
    // As after a stop: a handle a driver forgot must not keep a failed command alive.
    setTimeout(() => process.exit(1), 5000).unref();
  },
);
