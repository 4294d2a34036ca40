#!/usr/bin/env bash
# Real servers for development and CI, without Docker, on 127.0.0.1:
#   kafka       Kafka 3.9 KRaft single node   :9092   (Maven Central jars, system JDK 17)
#   opensearch  OpenSearch 2.19 single node   :9200   (Maven Central integ-test zip)
#   ferretdb    FerretDB 1.24, MongoDB wire   :27017  (Go module proxy; PostgreSQL 15 from Debian on :27432)
#   redis       Redis 7 from Debian           :6379
#   versitygw   versitygw 1.8, S3 API         :7070   (Go module proxy, posix backend)
#
# Usage:
#   servers.sh up [NAME...]      install what is missing, start, wait until healthy (default: all)
#   servers.sh down [NAME...]    stop (default: all)
#   servers.sh reset             stop all and delete their data (the next `up` starts empty)
#   servers.sh status [NAME...]  say which are healthy
#   servers.sh env               print the export lines for the tests and the app
#
# `up` is idempotent: a server that is already healthy is left alone (a FerretDB built from
# older sources is restarted from the current ones). Downloads and
# builds are cached in ~/.cache/marquee, ~/.m2 and Go's caches; state (pid files, logs,
# data) goes to $MARQUEE_SERVERS_DIR (default ~/.cache/marquee/run). See README.md.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
source "$HERE/kafka.sh"
source "$HERE/opensearch.sh"
source "$HERE/ferretdb.sh"
source "$HERE/redis.sh"
source "$HERE/versitygw.sh"

ALL=(kafka opensearch ferretdb redis versitygw)
# Seconds to wait for health after start; OpenSearch takes 20-60 s on 2 cores.
declare -A TIMEOUT=([kafka]=120 [opensearch]=240 [ferretdb]=30 [redis]=20 [versitygw]=30)

check_names() {
  local name
  for name in "$@"; do
    [[ -n "${TIMEOUT[$name]:-}" ]] || die "unknown server '$name' (known: ${ALL[*]})"
  done
}

up_one() {
  local name="$1" t pid port_var port
  if declare -F "${name}_stale" >/dev/null && "${name}_stale"; then
    log "$name: running a build of older sources; restarting it with the current ones"
    "${name}_stop"
  fi
  if "${name}_healthy"; then
    echo "$name: already running"
    return 0
  fi

  pid="$(read_pid "$("${name}_pidfile")" || true)"
  if pid_alive "$pid"; then
    # Ours and still starting (say, an earlier `up` was interrupted): just wait for it.
    log "$name: pid $pid is running but not healthy yet, waiting"
    STARTED_PID="$pid"
  else
    port_var="${name^^}_PORT"
    port="${!port_var}"
    if port_open "$port"; then
      die "$name: port $port is taken by something that is not a healthy $name (not started by this script)"
    fi
    t="$(now)"
    "${name}_install"
    log "$name: install check took $(elapsed "$t") s"
    STARTED_PID=""
    t="$(now)"
    "${name}_start"
  fi

  t="${t:-$(now)}"
  wait_healthy "$name" "${name}_healthy" "$STARTED_PID" "$("${name}_logfile")" "${TIMEOUT[$name]}" ||
    die "$name did not start (log: $("${name}_logfile"))"
  echo "$name: healthy $(elapsed "$t") s after start (log: $("${name}_logfile"))"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift

# Several shells (a developer, a test helper, CI) may run up/down at once; one at a time,
# or two of them start the same server and the second finds its port taken.
if [[ "$cmd" == up || "$cmd" == down || "$cmd" == reset ]]; then
  mkdir -p "$MARQUEE_CACHE"
  exec 9>"$MARQUEE_CACHE/servers.lock"
  flock 9
  # Every server is started with `9>&-`: a daemon that inherited fd 9 would hold
  # this lock for as long as it runs, and the next up/down would wait forever.
fi
case "$cmd" in
  up)
    (($#)) || set -- "${ALL[@]}"
    check_names "$@"
    mkdir -p "$MARQUEE_CACHE" "$MARQUEE_SERVERS_DIR"
    for name in "$@"; do up_one "$name"; done
    ;;
  down)
    (($#)) || set -- "${ALL[@]}"
    check_names "$@"
    for name in "$@"; do "${name}_stop"; done
    ;;
  reset)
    # CI starts every run from empty servers: topics, indexes and databases left by earlier
    # runs would make it slower (a broker restart reloads every partition) and less honest.
    for name in "${ALL[@]}"; do "${name}_stop"; done
    rm -rf "$MARQUEE_SERVERS_DIR" "$SHARED_RUN_DIR"
    echo "servers stopped, data removed ($MARQUEE_SERVERS_DIR, $SHARED_RUN_DIR)"
    ;;
  status)
    (($#)) || set -- "${ALL[@]}"
    check_names "$@"
    rc=0
    for name in "$@"; do
      if "${name}_healthy"; then echo "$name: healthy"; else echo "$name: down"; rc=1; fi
    done
    exit "$rc"
    ;;
  env)
    # eval "$(bash infra/local/servers.sh env)"
    echo "export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
    echo "export OPENSEARCH_URL=http://127.0.0.1:$OPENSEARCH_PORT"
    echo "export MONGODB_URL=mongodb://127.0.0.1:$FERRETDB_PORT"
    echo "export REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
    echo "export RELEASES_S3_URL=http://127.0.0.1:$VERSITYGW_PORT"
    echo "export RELEASES_S3_ACCESS_KEY=$VERSITYGW_ACCESS_KEY"
    echo "export RELEASES_S3_SECRET_KEY=$VERSITYGW_SECRET_KEY"
    ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
