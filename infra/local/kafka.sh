# shellcheck shell=bash
# Kafka, single-node KRaft (broker and controller in one JVM) on 127.0.0.1:9092.
# Sourced by servers.sh. Maven Central has no Kafka tarball but has every jar in it:
# kafka/pom.xml lists the broker plus a log4j 1 backend, copy-dependencies puts them
# in one directory, and the JDK runs kafka.Kafka from there.

KAFKA_VERSION="${KAFKA_VERSION:-3.9.2}"
KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093 # clients never use it; only the KRaft quorum does
KAFKA_LIBS="$MARQUEE_CACHE/kafka-$KAFKA_VERSION/libs"

kafka_pidfile() { echo "$MARQUEE_SERVERS_DIR/kafka/kafka.pid"; }
kafka_logfile() { echo "$MARQUEE_SERVERS_DIR/kafka/kafka.log"; }

kafka_install() {
  ensure_commands java mvn kcat
  # The marker is written last, so an interrupted copy is redone, not half-used.
  [[ -f "$KAFKA_LIBS/.complete" ]] && return 0
  log "kafka: fetching kafka_2.13:$KAFKA_VERSION from Maven Central into $KAFKA_LIBS"
  rm -rf "$KAFKA_LIBS"
  mkdir -p "$KAFKA_LIBS"
  (cd "$LOCAL_DIR/kafka" && mvn_dep_plugin copy-dependencies \
    -Dkafka.version="$KAFKA_VERSION" -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS") ||
    die "kafka: maven copy-dependencies failed"
  touch "$KAFKA_LIBS/.complete"
}

# kafka_healthy: the port accepts connections AND the broker answers a metadata
# request (an open port alone is seen before the broker has joined the KRaft quorum).
kafka_healthy() {
  port_open "$KAFKA_PORT" || return 1
  # Captured, not piped into `grep -q`: with pipefail, grep quitting early would SIGPIPE kcat.
  local metadata
  metadata="$(timeout 10 kcat -L -b "127.0.0.1:$KAFKA_PORT" -m 3 2>/dev/null)" || return 1
  [[ "$metadata" == *"broker 1 at 127.0.0.1:$KAFKA_PORT"* ]]
}

kafka_write_config() {
  local dir="$1"
  cat >"$dir/server.properties" <<EOF
# Written by infra/local/kafka.sh on every start; edit that script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
# One node: every replication factor must be 1 or topic creation fails.
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
# One partition for __consumer_offsets: the first consumer group comes up much faster.
offsets.topic.num.partitions=1
# Do not hold the first rebalance for 3 s waiting for more members (tests join alone).
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
num.partitions=4
EOF
  # log4j 1 (reload4j) configuration: everything to stdout, which start sends to kafka.log.
  cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
EOF
}

kafka_start() {
  local dir logfile
  dir="$(state_dir kafka)"
  logfile="$(kafka_logfile)"
  kafka_write_config "$dir"

  local java_opts=(-Xms512m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$dir/log4j.properties" "-Dkafka.logs.dir=$dir")

  # KRaft storage must be formatted once with a cluster id; keep the id with the data so
  # restarts reuse it (--ignore-formatted makes the format step a no-op after the first).
  if [[ ! -s "$dir/cluster-id" ]]; then
    local id
    # The id is the last line; log4j may print before it.
    id="$(java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool random-uuid | tail -n 1)"
    [[ "$id" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "kafka: StorageTool random-uuid gave '$id'"
    echo "$id" >"$dir/cluster-id"
  fi
  java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
    -t "$(cat "$dir/cluster-id")" -c "$dir/server.properties" --ignore-formatted >>"$logfile" 2>&1 ||
    { tail -n 20 "$logfile" >&2; die "kafka: storage format failed"; }

  # setsid: own session, so the broker outlives this shell and ignores its Ctrl-C.
  setsid java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$dir/server.properties" \
    >>"$logfile" 2>&1 </dev/null 9>&- &
  STARTED_PID=$!
  echo "$STARTED_PID" >"$(kafka_pidfile)"
}

kafka_stop() { stop_pidfile kafka "$(kafka_pidfile)" 60; }
