#!/usr/bin/env bash
# One real Apache Kafka node (KRaft, broker and controller in one JVM, node.id=1) on 127.0.0.1 for
# the end-to-end tests, from the jars tests/e2e/peers/build.sh resolves from Maven Central.
#
# Usage: tests/e2e/kafka-broker.sh start|stop|restart|env DIR
#   start    picks two free ports, writes DIR/server.properties, formats DIR/data with a random
#            cluster id (kafka.tools.StorageTool), starts the node, waits until it answers a
#            metadata request (kcat -L) and writes DIR/env (KAFKA_BROKERS=127.0.0.1:PORT, ...).
#            Fails if a node started from DIR is still running.
#   stop     SIGTERM (a clean shutdown: the broker leaves, logs are flushed), SIGKILL after
#            KAFKA_STOP_TIMEOUT seconds (default 30); returns once the JVM is gone. No-op if none runs.
#   restart  stop, then start again on the same ports and the same data (for outage tests).
#   env      prints DIR/env.
# Environment: KAFKA_PEER_DIR (the peer's cache dir; default: what `build.sh kafka` prints),
# KAFKA_HEAP (default 384m), KAFKA_PARTITIONS (default partitions of auto-created topics, 4),
# KAFKA_START_TIMEOUT (seconds, default 120). The node's own log is DIR/broker.log.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() { echo "usage: $0 start|stop|restart|env DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd="$1"
mkdir -p "$2"
dir="$(cd "$2" && pwd)"
log() { echo "kafka-broker: $*" >&2; }

# free_port: a port the kernel hands out for an ephemeral bind on 127.0.0.1 (free right now).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

running_pid() {
  [[ -f "$dir/pid" ]] || return 1
  local pid
  pid="$(cat "$dir/pid")"
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

peer_dir() {
  if [[ -n "${KAFKA_PEER_DIR:-}" ]]; then echo "$KAFKA_PEER_DIR"; return; fi
  "$here/peers/build.sh" kafka | tail -n 1
}

write_config() {
  local broker_port controller_port
  broker_port="$(free_port)"
  controller_port="$(free_port)"
  while [[ "$controller_port" == "$broker_port" ]]; do controller_port="$(free_port)"; done
  # A single node: every internal topic has one replica; the group coordinator answers without
  # the initial rebalance delay; auto-created topics (cronledger's P.decisions, P.ledger, and the
  # watch topic the tests fill) get several partitions so per-key order and partition moves mean
  # something.
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=true
num.partitions=${KAFKA_PARTITIONS:-4}
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
log.flush.interval.messages=1
EOF
  cat >"$dir/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $dir/broker.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = info
logger.apache.name = org.apache.kafka
logger.apache.level = info
EOF
  echo "KAFKA_BROKERS=127.0.0.1:$broker_port" >"$dir/env"
}

# java_cmd LIBS: sets JAVA_CMD to the JVM command line of the tools and the node. A small heap and
# the client compiler only: the tests' load is light and the machine is shared.
java_cmd() {
  JAVA_CMD=(java "-Xmx${KAFKA_HEAP:-384m}" -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
    -Djava.awt.headless=true "-Dlog4j2.configurationFile=$dir/log4j2.properties" -cp "$1/*")
}

format_storage() {
  local libs="$1" cluster_id
  # A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (what
  # `kafka-storage random-uuid` prints).
  cluster_id="$(python3 -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("="))')"
  rm -rf "$dir/data"
  java_cmd "$libs"
  "${JAVA_CMD[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/server.properties" \
    >"$dir/format.log" 2>&1 || { log "formatting $dir/data failed:"; cat "$dir/format.log" >&2; exit 1; }
  echo "KAFKA_CLUSTER_ID=$cluster_id" >>"$dir/env"
}

launch() {
  local libs="$1" start brokers
  start=$(date +%s%N)
  # setsid: the node gets its own session, so a test's Ctrl-C or process-group kill does not reach
  # it; stop() ends it by pid.
  java_cmd "$libs"
  setsid bash -c 'exec "$@"' _ "${JAVA_CMD[@]}" kafka.Kafka "$dir/server.properties" \
    >"$dir/broker.out" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  brokers="$(sed -n 's/^KAFKA_BROKERS=//p' "$dir/env")"
  local deadline=$(( $(date +%s) + ${KAFKA_START_TIMEOUT:-120} ))
  # Answering means: the metadata response names broker 1 at the advertised address.
  until kcat -b "$brokers" -L -m 5 2>/dev/null | grep -q "broker 1 at $brokers"; do
    if ! running_pid >/dev/null; then
      log "the node exited during start-up; last lines of $dir/broker.out and broker.log:"
      tail -n 20 "$dir/broker.out" "$dir/broker.log" >&2 2>/dev/null || true
      exit 1
    fi
    if (( $(date +%s) > deadline )); then
      log "no metadata answer from $brokers within ${KAFKA_START_TIMEOUT:-120} s"
      stop_node
      exit 1
    fi
    sleep 0.5
  done
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  sed -i '/^KAFKA_START_MS=/d; /^KAFKA_BROKER_PID=/d' "$dir/env"
  echo "KAFKA_START_MS=$ms" >>"$dir/env"
  echo "KAFKA_BROKER_PID=$(cat "$dir/pid")" >>"$dir/env"
  log "node up at $brokers in $ms ms (pid $(cat "$dir/pid"), log $dir/broker.log)"
}

stop_node() {
  local pid
  pid="$(running_pid)" || { rm -f "$dir/pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(( $(date +%s) + ${KAFKA_STOP_TIMEOUT:-30} ))
  while kill -0 "$pid" 2>/dev/null; do
    if (( $(date +%s) > deadline )); then
      log "pid $pid still running ${KAFKA_STOP_TIMEOUT:-30} s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      # The node is not our child: wait for the kernel to reap it.
      while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
      break
    fi
    sleep 0.2
  done
  rm -f "$dir/pid"
  log "node stopped (pid $pid)"
}

case "$cmd" in
  start)
    if pid="$(running_pid)"; then log "a node from $dir is running (pid $pid)"; exit 1; fi
    libs="$(peer_dir)/libs"
    [[ -d "$libs" ]] || { log "no Kafka jars in $libs"; exit 1; }
    write_config
    format_storage "$libs"
    launch "$libs"
    ;;
  stop) stop_node ;;
  restart)
    [[ -f "$dir/server.properties" && -d "$dir/data" ]] || { log "nothing was started from $dir"; exit 1; }
    stop_node
    launch "$(peer_dir)/libs"
    ;;
  env) cat "$dir/env" ;;
  *) usage ;;
esac
