/**
 * Gating of the server-backed port suites on their environment variable, the same way as
 * test/int/servers.int.test.ts: a suite runs when its variable is set; when it is not, it fails
 * under REQUIRE_SERVERS=1 (CI, so CI can never go green without the servers) and is skipped
 * otherwise, with the reason in the test's title.
 */
import assert from 'node:assert/strict';

export interface DescribeWithServerOptions {
  /**
   * Whether REQUIRE_SERVERS=1 makes a missing variable fail. False for a server no registry
   * here offers (EventStoreDB): CI cannot start it, so its absence is a skip everywhere.
   * Default true.
   */
  requirable?: boolean;
  /** Why the suite is skipped when the variable is not set. Default: how to start the servers. */
  skipReason?: string;
}

/** The server address in `envVar`, or undefined when it is not set (or empty). */
export function serverUrl(envVar: string): string | undefined {
  const value = process.env[envVar];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Defines `define(url)` inside a describe block when `envVar` is set; otherwise one test that
 * fails (REQUIRE_SERVERS=1 and a requirable server) or is skipped, saying why.
 */
export function describeWithServer(
  title: string,
  envVar: string,
  define: (url: string) => void,
  options: DescribeWithServerOptions = {},
): void {
  const url = serverUrl(envVar);
  if (url !== undefined) {
    describe(`${title} at ${url}`, () => define(url));
    return;
  }
  const reason = options.skipReason ?? `${envVar} not set: run \`bash infra/local/servers.sh up\`, then \`eval "$(bash infra/local/servers.sh env)"\``;
  describe(title, () => {
    if (process.env.REQUIRE_SERVERS === '1' && (options.requirable ?? true)) {
      it(`fails: REQUIRE_SERVERS=1 but ${envVar} is not set`, () => {
        assert.fail(`${envVar} is not set, and REQUIRE_SERVERS=1 forbids skipping. ${reason}`);
      });
    } else {
      it(`skipped: ${reason}`, function () {
        this.skip();
      });
    }
  });
}
