# shellcheck shell=bash
# FerretDB 1.x, MongoDB wire protocol on 127.0.0.1:27017, SQLite backend. Sourced by
# servers.sh. No real mongod is in any registry we can reach; ferretdb/main.go is a
# project-owned main around the embeddable FerretDB package, built with the local Go.

FERRETDB_PORT=27017
FERRETDB_SRC="$LOCAL_DIR/ferretdb"

# The binary's directory is keyed by a hash of the sources, so editing main.go, go.mod
# or go.sum builds a new binary while an unchanged tree reuses the cached one.
ferretdb_bin() {
  local key
  key="$(cat "$FERRETDB_SRC/main.go" "$FERRETDB_SRC/go.mod" "$FERRETDB_SRC/go.sum" | sha256sum | cut -c1-12)"
  echo "$MARQUEE_CACHE/ferretdb-$key/ferretdb"
}
ferretdb_pidfile() { echo "$MARQUEE_SERVERS_DIR/ferretdb/ferretdb.pid"; }
ferretdb_logfile() { echo "$MARQUEE_SERVERS_DIR/ferretdb/ferretdb.log"; }

ferretdb_install() {
  local bin
  bin="$(ferretdb_bin)"
  [[ -x "$bin" ]] && return 0
  # Go is not a Debian package here (bookworm's Go is too old for FerretDB's go.mod);
  # the machine has it in /usr/local/go.
  local go=go
  command -v go >/dev/null 2>&1 || go=/usr/local/go/bin/go
  [[ -x "$(command -v "$go")" ]] || die "ferretdb: the Go toolchain (go 1.24+) is needed to build FerretDB"
  log "ferretdb: building $(grep -o 'FerretDB/FerretDB v[0-9.]*' "$FERRETDB_SRC/go.mod") (first build takes about a minute)"
  # -mod=readonly: go.sum is committed, the build must not rewrite it.
  # ferretdb_no_postgresql: only the SQLite backend is used; less to compile.
  (cd "$FERRETDB_SRC" && GOFLAGS=-mod=readonly CGO_ENABLED=0 "$go" build \
    -tags ferretdb_no_postgresql -trimpath -o "$bin.tmp" .) || die "ferretdb: go build failed"
  mv "$bin.tmp" "$bin"
}

ferretdb_healthy() {
  port_open "$FERRETDB_PORT" && "$(ferretdb_bin)" -ping "127.0.0.1:$FERRETDB_PORT" >/dev/null 2>&1
}

ferretdb_start() {
  local dir
  dir="$(state_dir ferretdb)"
  setsid "$(ferretdb_bin)" -listen-addr "127.0.0.1:$FERRETDB_PORT" -sqlite-dir "$dir/data" \
    >>"$(ferretdb_logfile)" 2>&1 </dev/null 9>&- &
  STARTED_PID=$!
  echo "$STARTED_PID" >"$(ferretdb_pidfile)"
}

ferretdb_stop() { stop_pidfile ferretdb "$(ferretdb_pidfile)" 15; }
