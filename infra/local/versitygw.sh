# shellcheck shell=bash
# versitygw (Apache-2.0), an S3-compatible server over a plain directory, on 127.0.0.1:7070.
# Sourced by servers.sh. Built from the Go module proxy with the machine's Go; the release
# store's S3 adapter (infra/releases/s3ReleaseStore.ts) runs its behaviour suite against it.

VERSITYGW_PORT=7070
VERSITYGW_VERSION=v1.8.0
# Development credentials of a loopback-only server (the root account of versitygw).
VERSITYGW_ACCESS_KEY=marquee
VERSITYGW_SECRET_KEY=marquee-dev-secret

versitygw_bin() { echo "$MARQUEE_CACHE/versitygw-$VERSITYGW_VERSION/versitygw"; }
versitygw_pidfile() { echo "$MARQUEE_SERVERS_DIR/versitygw/versitygw.pid"; }
versitygw_logfile() { echo "$MARQUEE_SERVERS_DIR/versitygw/versitygw.log"; }

versitygw_install() {
  local bin
  bin="$(versitygw_bin)"
  [[ -x "$bin" ]] && return 0
  local go=go
  command -v go >/dev/null 2>&1 || go=/usr/local/go/bin/go
  [[ -x "$(command -v "$go")" ]] || die "versitygw: the Go toolchain is needed to build versitygw"
  log "versitygw: building $VERSITYGW_VERSION (first build takes about 3 minutes)"
  # go install of a pinned version: the module proxy's go.sum check applies, no source tree here.
  GOBIN="$(dirname "$bin")" CGO_ENABLED=0 "$go" install -trimpath \
    "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" || die "versitygw: go install failed"
}

# Any HTTP answer on the S3 port (an anonymous ListBuckets is a 403) means it serves.
versitygw_healthy() {
  port_open "$VERSITYGW_PORT" &&
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$VERSITYGW_PORT/")" =~ ^[2-4][0-9][0-9]$ ]]
}

versitygw_start() {
  local dir
  dir="$(state_dir versitygw)"
  mkdir -p "$dir/data"
  ROOT_ACCESS_KEY="$VERSITYGW_ACCESS_KEY" ROOT_SECRET_KEY="$VERSITYGW_SECRET_KEY" \
    setsid "$(versitygw_bin)" --port "127.0.0.1:$VERSITYGW_PORT" posix "$dir/data" \
    >>"$(versitygw_logfile)" 2>&1 </dev/null 9>&- &
  STARTED_PID=$!
  echo "$STARTED_PID" >"$(versitygw_pidfile)"
}

versitygw_stop() { stop_pidfile versitygw "$(versitygw_pidfile)" 15; }
