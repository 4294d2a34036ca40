#!/usr/bin/env bash
# Property-based check of the API against its own OpenAPI document: schemathesis
# (`st run --checks all`) generates requests the document allows and forbids and checks each
# answer (status, schema, headers, 405 for other methods, 401 without a key, no 5xx).
# It runs `marquee start` on the sample catalog with the embedded engines, in a temporary data
# directory on a free port, with a key and a rate limit high enough not to answer 429.
# Exits non-zero on any schemathesis failure. Usage: scripts/schemathesis.sh [extra st options]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Pinned: a new schemathesis release may add checks, which should be a deliberate upgrade.
ST_VERSION=4.32.5
# Cases per operation: 100 make about 3,500 cases, under two minutes on the CI machine.
MAX_EXAMPLES="${ST_MAX_EXAMPLES:-100}"
venv="${HOME}/.cache/marquee/venv"
if ! "$venv/bin/st" --version 2>/dev/null | grep -qF "$ST_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$ST_VERSION"
fi

data="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
    # `marquee` restarts itself once with a V8 flag: the server is its child.
    kill -KILL $(pgrep -P "$server_pid") "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

port="$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
base="http://127.0.0.1:${port}"
# The embedded engines only: the server variables CI exports for the other tests are dropped.
environment=(env -u KAFKA_BROKERS -u EVENTSTORE_URL -u MONGODB_URL -u OPENSEARCH_URL -u REDIS_URL
  DATA_DIR="$data" PORT="$port" RATE_LIMIT_PER_MINUTE=1000000 LOG_LEVEL=warn)

# `--sample` asks for the sample catalog where `marquee start` has that flag; without the flag
# (older versions) `start` loads it by itself on an empty data directory.
sample=()
if node bin/marquee.js help 2>&1 | grep -qF -- '--sample'; then sample=(--sample); fi
# Started directly (not through a function, which would fork a subshell): $! is the server.
"${environment[@]}" node bin/marquee.js start "${sample[@]}" >"$data/server.log" 2>&1 &
server_pid=$!

# Waits until GET $1 answers 200, while the server runs, until the deadline.
deadline=$((SECONDS + 900))
wait_for() {
  echo "schemathesis: waiting for $1 ($2)"
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = 200 ]; do
    if ! kill -0 "$server_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      echo "schemathesis: gave up waiting for $1; the server log:" >&2
      tail -n 50 "$data/server.log" >&2
      exit 1
    fi
    sleep 2
  done
}

wait_for "${base}/readyz" 'the sample catalog loading'
key="$("${environment[@]}" node bin/marquee.js keys create --name st | tail -n 1)"
# The snapshot endpoints answer 503 until the first weekly release, which `start` builds once
# ready: wait for it, so that schemathesis tests them rather than their outage.
wait_for "${base}/v1/snapshots" 'the first weekly release'

status=0
# From the temporary directory: schemathesis keeps a cache of the failures it found in the
# working directory, which is not the work tree's business.
mkdir -p "$data/st" && cd "$data/st"
"$venv/bin/st" run "${base}/v1/openapi" \
  --checks all \
  --header "Authorization: Bearer ${key}" \
  --max-examples "$MAX_EXAMPLES" \
  --generation-database none \
  --request-timeout 10 \
  --no-color \
  "$@" 2>&1 | sed -E 's/^=+ (.*) =+$/-- \1 --/' || status=$?
# schemathesis closes on a pytest-style banner ("==== 2 warnings in 39s ===="), which tooling
# that reads pytest's closing line takes for a run of no test; the banners are reworded above,
# and pipefail keeps schemathesis's status.
if [ "$status" -ne 0 ]; then
  echo "schemathesis: failures (exit ${status}); the server log ends with:" >&2
  tail -n 20 "$data/server.log" >&2
fi
exit "$status"
