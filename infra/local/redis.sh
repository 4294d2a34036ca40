# shellcheck shell=bash
# Redis from Debian on 127.0.0.1:6379. Sourced by servers.sh. Started by hand as a
# daemon with our own pid file: there is no systemd here (and CI must not need one).

REDIS_PORT=6379

redis_pidfile() { echo "$MARQUEE_SERVERS_DIR/redis/redis.pid"; }
redis_logfile() { echo "$MARQUEE_SERVERS_DIR/redis/redis.log"; }

redis_install() { ensure_commands redis-server redis-cli; }

redis_healthy() {
  [[ "$(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]
}

redis_start() {
  local dir
  dir="$(state_dir redis)"
  rm -f "$(redis_pidfile)"
  # No config file: Debian's /etc/redis/redis.conf is for the packaged service.
  # No persistence: it only holds rate-limit counters for tests and development.
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$dir" \
    --daemonize yes --pidfile "$(redis_pidfile)" --logfile "$(redis_logfile)" \
    --save '' --appendonly no 9>&- ||
    { tail -n 20 "$(redis_logfile)" >&2; die "redis: redis-server failed to start"; }
  # --daemonize returns at once; the pid file appears when the daemon is up.
  for _ in $(seq 50); do [[ -s "$(redis_pidfile)" ]] && break; sleep 0.1; done
  STARTED_PID="$(read_pid "$(redis_pidfile)" || true)"
}

redis_stop() { stop_pidfile redis "$(redis_pidfile)" 15; }
