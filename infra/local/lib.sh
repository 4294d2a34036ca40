# shellcheck shell=bash
# Shared helpers for infra/local/*.sh. Sourced by servers.sh, never run directly.
#
# Layout (all overridable through the environment):
#   MARQUEE_CACHE        downloads and builds that survive restarts  (~/.cache/marquee)
#   MARQUEE_SERVERS_DIR  per-server state: pid files, logs, data     ($MARQUEE_CACHE/run)
# Maven keeps its own cache in ~/.m2, Go in ~/go/pkg/mod and ~/.cache/go-build.

MARQUEE_CACHE="${MARQUEE_CACHE:-$HOME/.cache/marquee}"
MARQUEE_SERVERS_DIR="${MARQUEE_SERVERS_DIR:-$MARQUEE_CACHE/run}"
LOCAL_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { printf '[servers] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

now() { date +%s.%N; }
# elapsed START -> seconds since START with one decimal
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

state_dir() { # state_dir NAME -> creates and prints $MARQUEE_SERVERS_DIR/NAME
  mkdir -p "$MARQUEE_SERVERS_DIR/$1"
  printf '%s\n' "$MARQUEE_SERVERS_DIR/$1"
}

# port_open PORT: true if something accepts TCP connections on 127.0.0.1:PORT.
# bash's /dev/tcp needs no extra tool; timeout guards against a hanging connect.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# A zombie (exited, not yet reaped by a parent that is itself stopped, say) is not alive:
# `kill -0` still succeeds on it, and a stop would wait out its whole grace period for nothing.
pid_alive() {
  [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
  local state
  # The state is the first field after the command name's closing parenthesis.
  state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1 || true)"
  [[ "$state" != Z ]]
}

read_pid() { [[ -s "$1" ]] && tr -dc '0-9' <"$1"; }

# --- system packages --------------------------------------------------------

# Commands the servers and their health checks need, and the Debian package of each.
declare -A APT_PACKAGE_OF=(
  [redis-server]=redis-server
  [redis-cli]=redis-tools
  [kcat]=kafkacat # the kafkacat package pulls in kcat; kcat is the health check of Kafka
  [curl]=curl
  [git]=git
  [unzip]=unzip
  [java]=openjdk-17-jre-headless
  [mvn]=maven
  [runuser]=util-linux
  [psql]=postgresql-15
  [/usr/lib/postgresql/15/bin/postgres]=postgresql-15
  # The release's Parquet encoder (scripts/build-wasm.sh): zstd's C sources to wasm32.
  [clang-14]=clang-14
  [llvm-ar-14]=llvm-14
)

# State of the servers that run as a user of their own (OpenSearch, PostgreSQL): root's home,
# where $MARQUEE_SERVERS_DIR lives by default, is closed to them.
SHARED_RUN_DIR=/var/lib/marquee/run

# ensure_commands CMD...: apt-get installs the packages of the missing commands,
# all in one go, running `apt-get update` only when something is missing.
APT_UPDATED=""
ensure_commands() {
  local cmd missing=()
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${APT_PACKAGE_OF[$cmd]:?no package known for $cmd}")
  done
  ((${#missing[@]})) || return 0
  # Keep the .deb files under ~/.cache so a re-install on this machine needs no download.
  local archives="$MARQUEE_CACHE/apt/archives"
  mkdir -p "$archives/partial"
  local apt_opts=(-o "Dir::Cache::archives=$archives" -o APT::Sandbox::User=root)
  log "apt-get install ${missing[*]}"
  if [[ -z "$APT_UPDATED" ]]; then
    apt-get "${apt_opts[@]}" update -qq || die "apt-get update failed"
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
}

# java_home: JDK 17 from the system (Kafka 3.9 and OpenSearch 2.19 both run on it).
java_home() {
  local java
  java="$(readlink -f "$(command -v java)")" || die "java not found"
  dirname "$(dirname "$java")"
}

# mvn_dep_plugin GOAL ARGS...: maven-dependency-plugin at a fixed version; Maven 3.8's
# default binding is an old 2.x plugin without the options used here.
# Maven's output goes to $MARQUEE_CACHE/mvn.log and is shown only when it fails.
mvn_dep_plugin() {
  local goal="$1" mvnlog="$MARQUEE_CACHE/mvn.log"
  shift
  mkdir -p "$MARQUEE_CACHE"
  if ! mvn -B -Dstyle.color=never --no-transfer-progress \
    "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:$goal" "$@" >"$mvnlog" 2>&1; then
    tail -n 30 "$mvnlog" >&2
    return 1
  fi
}

# --- process lifecycle ------------------------------------------------------

# wait_healthy NAME CHECK_FN PID LOG TIMEOUT_S: polls CHECK_FN every half second until it
# succeeds. Fails early if PID died, or after TIMEOUT_S; on failure prints the log tail.
wait_healthy() {
  local name="$1" check="$2" pid="$3" logfile="$4" timeout="$5"
  local deadline=$((SECONDS + timeout))
  until "$check"; do
    if ! pid_alive "$pid"; then
      log "$name exited during start-up; last lines of $logfile:"
      tail -n 40 "$logfile" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "$name not healthy after ${timeout}s; last lines of $logfile:"
      tail -n 40 "$logfile" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

# stop_pidfile NAME PIDFILE [GRACE_S]: SIGTERM, wait for a clean shutdown, SIGKILL after
# GRACE_S. Only the pid recorded in our own pid file is ever signalled.
stop_pidfile() {
  local name="$1" pidfile="$2" grace="${3:-30}" pid
  pid="$(read_pid "$pidfile" || true)"
  if ! pid_alive "$pid"; then
    log "$name: not running"
    rm -f "$pidfile"
    return 0
  fi
  # A frozen server (SIGSTOP, as the hostile tests do) acts on SIGTERM only once continued.
  kill -TERM "$pid"
  kill -CONT "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while pid_alive "$pid" && ((SECONDS < deadline)); do sleep 0.3; done
  if pid_alive "$pid"; then
    log "$name: still running after ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  log "$name: stopped (pid $pid)"
}
