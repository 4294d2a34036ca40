# shellcheck shell=bash
# OpenSearch, single node, plain HTTP on 127.0.0.1:9200. Sourced by servers.sh.
#
# Source: the integ-test zip on Maven Central, the bare server with only the
# transport-netty4 module (no analysis-common, painless, reindex or security plugin).
# OpenSearch refuses to run as root, so it runs as the system user `marquee`, which
# cannot enter /root (mode 0700): the unpacked server, its config, data and pid file
# therefore live under that user's home, not under ~/.cache/marquee of root.
# Only its console log goes to $MARQUEE_SERVERS_DIR/opensearch/opensearch.log.

OPENSEARCH_VERSION="${OPENSEARCH_VERSION:-2.19.6}"
OPENSEARCH_PORT=9200
OPENSEARCH_USER=marquee
OPENSEARCH_USER_HOME=/var/lib/marquee
OPENSEARCH_HOME="$OPENSEARCH_USER_HOME/opensearch-$OPENSEARCH_VERSION"
# Config, data and logs of the running node; written by the marquee user.
OPENSEARCH_RUN="$OPENSEARCH_USER_HOME/run/opensearch"

opensearch_pidfile() { echo "$OPENSEARCH_RUN/opensearch.pid"; }
opensearch_logfile() { echo "$MARQUEE_SERVERS_DIR/opensearch/opensearch.log"; }

opensearch_install() {
  ensure_commands java mvn unzip curl runuser
  if ! id -u "$OPENSEARCH_USER" >/dev/null 2>&1; then
    log "opensearch: creating system user $OPENSEARCH_USER"
    useradd --system --user-group --home-dir "$OPENSEARCH_USER_HOME" --create-home \
      --shell /usr/sbin/nologin "$OPENSEARCH_USER"
  fi
  [[ -f "$OPENSEARCH_HOME/.complete" ]] && return 0

  log "opensearch: fetching opensearch:$OPENSEARCH_VERSION:zip from Maven Central"
  local tmp
  tmp="$(mktemp -d)"
  # The zip is cached in ~/.m2; copy puts a throw-away copy in $tmp to unzip from.
  mvn_dep_plugin copy \
    -Dartifact="org.opensearch.distribution.integ-test-zip:opensearch:$OPENSEARCH_VERSION:zip" \
    -DoutputDirectory="$tmp" || die "opensearch: maven copy failed"
  rm -rf "$OPENSEARCH_HOME"
  unzip -q "$tmp/opensearch-$OPENSEARCH_VERSION.zip" -d "$OPENSEARCH_USER_HOME" ||
    die "opensearch: unzip failed"
  rm -rf "$tmp"
  # Some unzip paths drop the exec bits of the launch scripts.
  chmod +x "$OPENSEARCH_HOME"/bin/*
  chown -R "$OPENSEARCH_USER:$OPENSEARCH_USER" "$OPENSEARCH_HOME"
  touch "$OPENSEARCH_HOME/.complete"
}

opensearch_healthy() {
  local health
  health="$(curl -fsS --max-time 3 "http://127.0.0.1:$OPENSEARCH_PORT/_cluster/health" 2>/dev/null)" || return 1
  [[ "$health" =~ \"status\":\"(green|yellow)\" ]]
}

opensearch_write_config() {
  local conf="$OPENSEARCH_RUN/config"
  mkdir -p "$conf" "$OPENSEARCH_RUN/data" "$OPENSEARCH_RUN/logs"
  # jvm.options and log4j2.properties come from the distribution; the heap is pinned below.
  cp -r "$OPENSEARCH_HOME/config/." "$conf/"
  sed -i -E 's/^-Xms[0-9]+[gm]$/-Xms512m/; s/^-Xmx[0-9]+[gm]$/-Xmx1g/' "$conf/jvm.options"
  cat >"$conf/opensearch.yml" <<EOF
# Written by infra/local/opensearch.sh on every start; edit that script, not this file.
cluster.name: marquee-local
node.name: marquee-local
network.host: 127.0.0.1
http.port: $OPENSEARCH_PORT
transport.port: 9300
# One node, no discovery, no bootstrap checks (they apply only to non-loopback binds).
discovery.type: single-node
path.data: $OPENSEARCH_RUN/data
path.logs: $OPENSEARCH_RUN/logs
# A nearly full CI disk must not turn indices read-only in the middle of a test run.
cluster.routing.allocation.disk.threshold_enabled: false
EOF
  # Only OpenSearch's own directory: the run directory beside it also holds FerretDB's
  # PostgreSQL cluster, which must stay the postgres user's (a recursive chown of the whole
  # run directory made PostgreSQL refuse to start after OpenSearch was restarted).
  chown "$OPENSEARCH_USER:$OPENSEARCH_USER" "$OPENSEARCH_USER_HOME/run"
  chown -R "$OPENSEARCH_USER:$OPENSEARCH_USER" "$OPENSEARCH_RUN"
}

opensearch_start() {
  local logfile jhome
  state_dir opensearch >/dev/null
  logfile="$(opensearch_logfile)"
  jhome="$(java_home)"
  opensearch_write_config
  rm -f "$(opensearch_pidfile)"

  # runuser stays as the parent of the JVM; on SIGTERM it kills its child after 2 s,
  # too soon for a clean shutdown. So the pid file that `down` signals is the one
  # OpenSearch writes itself (-p, the JVM), and runuser exits when the JVM does.
  setsid runuser -u "$OPENSEARCH_USER" -- env \
    JAVA_HOME="$jhome" OPENSEARCH_JAVA_HOME="$jhome" \
    OPENSEARCH_PATH_CONF="$OPENSEARCH_RUN/config" \
    "$OPENSEARCH_HOME/bin/opensearch" -p "$(opensearch_pidfile)" \
    >>"$logfile" 2>&1 </dev/null 9>&- &
  STARTED_PID=$!
}

opensearch_stop() { stop_pidfile opensearch "$(opensearch_pidfile)" 60; }
