# shellcheck shell=bash
# FerretDB 1.x, MongoDB wire protocol on 127.0.0.1:27017, on a private PostgreSQL 15
# (Debian postgresql-15) listening on 127.0.0.1:27432. Sourced by servers.sh. No real mongod
# is in any registry we can reach; ferretdb/main.go is a project-owned main around the
# embeddable FerretDB package, built with the local Go.
#
# Why PostgreSQL and not FerretDB's SQLite backend: measured with EXPLAIN, both backends of
# FerretDB 1.24 answer `{_id: k}` with a full scan (SQLite: "SCAN"; PostgreSQL: "Seq Scan",
# its btree on `_jsonb->'_id'` does not serve the `@>` it filters with). On PostgreSQL an
# index that serves it can be added (ferretdb-index-id.sql); on SQLite it cannot. A lookup
# then costs the same at any collection size instead of growing with it, and a read-model
# load is linear instead of quadratic (README.md, "FerretDB backend").

FERRETDB_PORT="${FERRETDB_PORT:-27017}"
FERRETDB_PG_PORT="${FERRETDB_PG_PORT:-27432}"
FERRETDB_PG_BIN=/usr/lib/postgresql/15/bin
FERRETDB_SRC="$LOCAL_DIR/ferretdb"

# The binary's directory is keyed by a hash of every file of ferretdb/ (in byte order of their
# names: LC_ALL=C), so editing main.go, go.mod, go.sum or the patch builds a new binary while an
# unchanged tree reuses the cached one. test/e2e/hostile.deps.e2e.test.ts asks this function.
ferretdb_bin() {
  local key LC_ALL=C
  key="$(cat "$FERRETDB_SRC"/* | sha256sum | cut -c1-12)"
  echo "$MARQUEE_CACHE/ferretdb-$key/ferretdb"
}
ferretdb_pidfile() { echo "$MARQUEE_SERVERS_DIR/ferretdb/ferretdb.pid"; }
ferretdb_logfile() { echo "$MARQUEE_SERVERS_DIR/ferretdb/ferretdb.log"; }

ferretdb_install() {
  # psql comes with postgresql-15 (through its client package), the server the FerretDB uses.
  ensure_commands psql runuser git "$FERRETDB_PG_BIN/postgres"
  local bin
  bin="$(ferretdb_bin)"
  [[ -x "$bin" ]] && return 0
  # Go is not a Debian package here (bookworm's Go is too old for FerretDB's go.mod);
  # the machine has it in /usr/local/go.
  local go=go
  command -v go >/dev/null 2>&1 || go=/usr/local/go/bin/go
  [[ -x "$(command -v "$go")" ]] || die "ferretdb: the Go toolchain (go 1.24+) is needed to build FerretDB"
  log "ferretdb: building $(grep -o 'FerretDB/FerretDB v[0-9.]*' "$FERRETDB_SRC/go.mod") (first build takes about a minute)"
  # FerretDB is built from a copy of its module with resource-track.patch applied (the patch
  # says why), through a `replace` in a copy of go.mod; the committed go.mod stays as it is.
  local work="$bin.build" mod
  rm -rf "$work" && mkdir -p "$work" || die "ferretdb: cannot make $work"
  mod="$(cd "$FERRETDB_SRC" && GOFLAGS=-mod=readonly "$go" mod download -json github.com/FerretDB/FerretDB |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -d "$mod" ]] || die "ferretdb: could not download the FerretDB module"
  cp -r "$mod" "$work/FerretDB" && chmod -R u+w "$work/FerretDB" &&
    (cd "$work/FerretDB" && git apply "$FERRETDB_SRC/resource-track.patch") ||
    die "ferretdb: applying resource-track.patch failed"
  cp "$FERRETDB_SRC/main.go" "$FERRETDB_SRC/go.mod" "$FERRETDB_SRC/go.sum" "$work/"
  # -mod=readonly: go.sum is committed, the build must not rewrite it.
  (cd "$work" && "$go" mod edit -replace github.com/FerretDB/FerretDB=./FerretDB &&
    GOFLAGS=-mod=readonly CGO_ENABLED=0 "$go" build -trimpath -o "$bin.tmp" .) ||
    die "ferretdb: go build failed"
  rm -rf "$work"
  mv "$bin.tmp" "$bin"
}

# The ping is the same in every build: a server started from older sources (not yet rebuilt)
# is pinged with its own binary, so `status` does not call it down.
ferretdb_healthy() {
  local bin
  bin="$(ferretdb_bin)"
  [[ -x "$bin" ]] || bin="$(ferretdb_running_bin)"
  port_open "$FERRETDB_PORT" && [[ -x "$bin" ]] && "$bin" -ping "127.0.0.1:$FERRETDB_PORT" >/dev/null 2>&1
}

ferretdb_running_bin() {
  local pid
  pid="$(read_pid "$(ferretdb_pidfile)" || true)"
  pid_alive "$pid" && readlink -f "/proc/$pid/exe"
}

# True when our FerretDB runs a binary built from other sources than the tree's (main.go,
# go.mod, go.sum or the patch changed since it started): `up` then stops it and starts the
# new build, instead of keeping the old one running.
ferretdb_stale() {
  local running
  running="$(ferretdb_running_bin)" || return 1
  [[ -n "$running" && "$running" != "$(readlink -f "$(ferretdb_bin)" 2>/dev/null || ferretdb_bin)" ]]
}

# PostgreSQL refuses to run as root: when servers.sh runs as root, the cluster belongs to
# the `postgres` user the Debian package creates.
ferretdb_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    (cd / && runuser -u postgres -- "$FERRETDB_PG_BIN/$1" "${@:2}")
  else
    "$FERRETDB_PG_BIN/$1" "${@:2}"
  fi
}

# The cluster's directory: when run as root it belongs to `postgres`, which cannot enter
# root's home (where $MARQUEE_SERVERS_DIR is by default).
ferretdb_pg_dir() {
  if [[ "$(id -u)" == 0 ]]; then echo "$SHARED_RUN_DIR/ferretdb-postgres"; else echo "$MARQUEE_SERVERS_DIR/ferretdb/postgres"; fi
}

ferretdb_pg_start() {
  local pg
  state_dir ferretdb >/dev/null
  pg="$(ferretdb_pg_dir)"
  if [[ ! -f "$pg/PG_VERSION" ]]; then
    mkdir -p "$pg"
    [[ "$(id -u)" == 0 ]] && chown postgres: "$pg"
    # Trust on loopback only; fsync off: a development and CI cluster, rebuilt from events.
    ferretdb_pg initdb -D "$pg" -U ferretdb --auth=trust -E UTF8 >>"$(ferretdb_logfile)" 2>&1 ||
      die "ferretdb: initdb failed (see $(ferretdb_logfile))"
  fi
  if ! ferretdb_pg pg_ctl -D "$pg" status >/dev/null 2>&1; then
    # `9>&-`: PostgreSQL would otherwise hold servers.sh's lock for as long as it runs.
    ferretdb_pg pg_ctl -D "$pg" -w -l "$pg/postgres.log" \
      -o "-p $FERRETDB_PG_PORT -k $pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
      start >>"$(ferretdb_logfile)" 2>&1 9>&- || die "ferretdb: PostgreSQL did not start (see $pg/postgres.log)"
  fi
  local psql=(psql -h 127.0.0.1 -p "$FERRETDB_PG_PORT" -U ferretdb -v ON_ERROR_STOP=1 -q)
  "${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ferretdb'" | grep -q 1 ||
    "${psql[@]}" -d postgres -c 'CREATE DATABASE ferretdb' || die "ferretdb: CREATE DATABASE failed"
  "${psql[@]}" -d ferretdb -f "$LOCAL_DIR/ferretdb-index-id.sql" >>"$(ferretdb_logfile)" 2>&1 ||
    die "ferretdb: loading ferretdb-index-id.sql failed"
}

ferretdb_start() {
  ferretdb_pg_start
  # pool_max_conns: FerretDB holds a pooled connection per update of an `update` command
  # until the command ends; the default pool (a few per core) deadlocks a bulk of 25.
  # GOGC/GOMEMLIMIT: FerretDB 1.24 turns every document into Go objects and JSON and back, so
  # with Go's default GOGC=100 a third of its CPU was garbage collection (pprof during a
  # sample start). GOGC=400 collects a quarter as often; GOMEMLIMIT caps the heap that lets
  # grow (a large insertMany peaked at 2.3 GB without it). Measured on SAMPLE_TITLES=1000
  # starts: FerretDB CPU 73-82 s -> 56 s, peak RSS 0.68 -> 1.14 GB (README.md).
  GOGC="${FERRETDB_GOGC:-400}" GOMEMLIMIT="${FERRETDB_GOMEMLIMIT:-1GiB}" setsid "$(ferretdb_bin)" -listen-addr "127.0.0.1:$FERRETDB_PORT" \
    -postgresql-url "postgres://ferretdb@127.0.0.1:$FERRETDB_PG_PORT/ferretdb?pool_max_conns=150" \
    ${FERRETDB_PPROF_ADDR:+-pprof-addr "$FERRETDB_PPROF_ADDR"} \
    >>"$(ferretdb_logfile)" 2>&1 </dev/null 9>&- &
  STARTED_PID=$!
  echo "$STARTED_PID" >"$(ferretdb_pidfile)"
}

ferretdb_stop() {
  stop_pidfile ferretdb "$(ferretdb_pidfile)" 15
  local pg
  pg="$(ferretdb_pg_dir)"
  if [[ -f "$pg/PG_VERSION" ]]; then ferretdb_pg pg_ctl -D "$pg" -m fast -w stop >/dev/null 2>&1 || true; fi
}
