#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, broker + controller in one JVM) on 127.0.0.1
# for development and tests. No Docker: the jars come from Maven Central (scripts/kafka/pom.xml).
#
#   scripts/kafka.sh start    fetch the jars if needed, start the broker, wait until it answers;
#                             the last line on stdout is  bootstrap=127.0.0.1:PORT
#   scripts/kafka.sh stop     SIGTERM, wait, SIGKILL after a timeout
#   scripts/kafka.sh status   running (exit 0, prints bootstrap=...) or not running (exit 3)
#
# Environment:
#   LAGASSIGN_KAFKA_DIR            run dir (config, data, logs, pid); default .cache/kafka/run
#   LAGASSIGN_KAFKA_START_TIMEOUT  seconds to wait for the broker to answer (default 120)
#   LAGASSIGN_KAFKA_STOP_TIMEOUT   seconds between SIGTERM and SIGKILL (default 30)
#   LAGASSIGN_KAFKA_HEAP_OPTS      JVM heap options (default -Xms256m -Xmx768m)
#   LAGASSIGN_KAFKA_PARENT_PID     if set, the broker is stopped once that process is gone
#                                  (the pytest fixture sets it, so a killed test run leaves no java)
#
# `start` on a stopped run dir starts from empty storage: the dev broker keeps no data across
# restarts. Progress goes to stderr; stdout carries only the bootstrap line.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pom="$root/scripts/kafka/pom.xml"
log4j_conf="$root/scripts/kafka/log4j2.properties"
cache="$root/.cache/kafka"
lib="$cache/lib"
run="${LAGASSIGN_KAFKA_DIR:-$cache/run}"
case "$run" in /*) ;; *) run="$PWD/$run" ;; esac
start_timeout="${LAGASSIGN_KAFKA_START_TIMEOUT:-120}"
stop_timeout="${LAGASSIGN_KAFKA_STOP_TIMEOUT:-30}"
heap_opts="${LAGASSIGN_KAFKA_HEAP_OPTS:--Xms256m -Xmx768m}"
python="${PYTHON:-python3}"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; else java=java; fi

say() { echo "kafka: $*" >&2; }
die() { echo "kafka: error: $*" >&2; exit 1; }

usage() {
  echo "usage: $0 start|stop|status" >&2
  exit 2
}

# ---------------------------------------------------------------------------------------------
# jars

pom_digest() { sha256sum "$pom" | cut -d' ' -f1; }

fetch_jars() {
  local want stamp="$lib/.pom.sha256"
  want="$(pom_digest)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  command -v mvn >/dev/null || die "mvn not found (Maven is needed to fetch the Kafka jars)"
  mkdir -p "$cache"
  exec 8>"$cache/.fetch.lock"
  flock -w 900 8 || die "timed out waiting for another fetch of the Kafka jars"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exec 8>&-; return 0; fi
  say "fetching Kafka jars from Maven Central into ${lib#"$root"/}"
  local tmp="$cache/lib.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$tmp" >&2; then
    rm -rf "$tmp"
    die "mvn dependency:copy-dependencies failed for $pom"
  fi
  echo "$want" >"$tmp/.pom.sha256"
  rm -rf "$lib"
  mv "$tmp" "$lib"
  exec 8>&-
}

# ---------------------------------------------------------------------------------------------
# process bookkeeping

pid_file="$run/kafka.pid"
watch_pid_file="$run/watchdog.pid"
bootstrap_file="$run/bootstrap"
props="$run/server.properties"
logs="$run/logs"

# The pid in the pid file, if that process is alive and is our broker (guards against pid reuse).
broker_pid() {
  local pid
  [ -f "$pid_file" ] || return 1
  pid="$(cat "$pid_file" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "kafka.Kafka $props" || return 1
  echo "$pid"
}

free_ports() {  # prints two distinct free TCP ports on 127.0.0.1
  "$python" - <<'EOF'
import socket
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

log_tail() {  # the broker's logs, or the files given
  local f
  [ $# -gt 0 ] || set -- "$logs/server.log" "$logs/console.out"
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "----- last 40 lines of $f -----"
    tail -n 40 "$f"
  done
}

write_props() {  # $1 broker port, $2 controller port
  cat >"$props" <<EOF
# Written by scripts/kafka.sh: single-node KRaft broker + controller on 127.0.0.1.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$2
listeners=PLAINTEXT://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2
advertised.listeners=PLAINTEXT://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$run/data

# one broker: every internal topic with replication factor 1 and few partitions
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

# small and light: 2 cores shared with other work
log.segment.bytes=1048576
log.index.size.max.bytes=1048576
log.retention.hours=24
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=8388608
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
num.replica.fetchers=1
background.threads=2
EOF
}

kill_broker() {  # $1 pid; SIGTERM, wait up to stop_timeout, then SIGKILL
  local pid="$1" waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$((stop_timeout * 10))" ]; then
      say "pid $pid still alive after ${stop_timeout}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  # reap-free wait: the broker is not our child, so poll until the pid is gone
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}

stop_watchdog() {
  local wpid
  [ -f "$watch_pid_file" ] || return 0
  wpid="$(cat "$watch_pid_file" 2>/dev/null || true)"
  if [[ "$wpid" =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$wpid/cmdline" 2>/dev/null \
      | grep -qF "kafka-watchdog"; then
    kill -TERM "$wpid" 2>/dev/null || true
  fi
  rm -f "$watch_pid_file"
}

# Stops the broker once LAGASSIGN_KAFKA_PARENT_PID is gone; exits when the broker is gone.
start_watchdog() {  # $1 broker pid, $2 parent pid
  setsid bash -c '
    # kafka-watchdog
    broker=$1 parent=$2 timeout=$3
    trap "exit 0" TERM
    while kill -0 "$broker" 2>/dev/null; do
      if ! kill -0 "$parent" 2>/dev/null; then
        kill -TERM "$broker" 2>/dev/null
        for _ in $(seq $((timeout * 10))); do kill -0 "$broker" 2>/dev/null || exit 0; sleep 0.1; done
        kill -KILL "$broker" 2>/dev/null
        exit 0
      fi
      sleep 1
    done
  ' kafka-watchdog "$1" "$2" "$stop_timeout" </dev/null >/dev/null 2>&1 8>&- 9>&- &
  echo $! >"$watch_pid_file"
}

# ---------------------------------------------------------------------------------------------
# commands

# One attempt: fresh storage, new ports, start, wait. Returns 0 when up, 1 on failure, 75 when
# the ports were taken in between (the caller retries with new ones).
start_once() {
  local bport cport uuid pid t0 now elapsed
  rm -rf "$run/data" "$logs" "$props" "$pid_file" "$bootstrap_file"
  mkdir -p "$run/data" "$logs"
  read -r bport cport < <(free_ports)
  [ -n "$bport" ] && [ -n "$cport" ] || die "could not pick free ports with $python"
  write_props "$bport" "$cport"

  local tool_opts=(-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
    -Dlog4j2.configurationFile="$log4j_conf" -Dkafka.logs.dir="$logs")
  uuid="$("$java" "${tool_opts[@]}" -cp "$lib/*" kafka.tools.StorageTool random-uuid \
    2>"$run/format.log" | tail -n 1)"
  [[ "$uuid" =~ ^[A-Za-z0-9_-]{22}$ ]] || {
    log_tail "$run/format.log" >&2
    die "StorageTool random-uuid failed"
  }
  if ! "$java" "${tool_opts[@]}" -cp "$lib/*" kafka.tools.StorageTool format --standalone \
      -t "$uuid" -c "$props" >>"$run/format.log" 2>&1; then
    log_tail "$run/format.log" "$logs/server.log" >&2
    die "StorageTool format failed"
  fi

  say "starting broker on 127.0.0.1:$bport (controller 127.0.0.1:$cport), run dir $run"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086  # heap_opts is a list of options
  setsid "$java" $heap_opts -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$log4j_conf" -Dkafka.logs.dir="$logs" \
    -cp "$lib/*" kafka.Kafka "$props" \
    </dev/null >"$logs/console.out" 2>&1 8>&- 9>&- &
  pid=$!
  echo "$pid" >"$pid_file"
  if [ -n "${LAGASSIGN_KAFKA_PARENT_PID:-}" ]; then
    start_watchdog "$pid" "$LAGASSIGN_KAFKA_PARENT_PID"
  fi

  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      stop_watchdog
      if grep -qE "BindException|Address already in use" "$logs/server.log" \
          "$logs/console.out" 2>/dev/null; then
        return 75
      fi
      say "the broker exited during start-up"
      log_tail >&2
      return 1
    fi
    if grep -qF "Kafka Server started" "$logs/server.log" 2>/dev/null && tcp_open "$bport"; then
      break
    fi
    now=$(date +%s%N)
    elapsed=$(((now - t0) / 1000000000))
    if [ "$elapsed" -ge "$start_timeout" ]; then
      say "the broker did not answer within ${start_timeout}s; stopping it"
      kill_broker "$pid"
      rm -f "$pid_file"
      stop_watchdog
      log_tail >&2
      return 1
    fi
    sleep 0.25
  done
  now=$(date +%s%N)
  echo "127.0.0.1:$bport" >"$bootstrap_file"
  say "broker started (pid $pid) in $(((now - t0) / 1000000)) ms"
  return 0
}

cmd_start() {
  local pid rc attempt
  if pid="$(broker_pid)"; then
    say "already running (pid $pid)"
    echo "bootstrap=$(cat "$bootstrap_file")"
    return 0
  fi
  command -v "$java" >/dev/null || die "java not found (Java 17+ is needed)"
  fetch_jars
  stop_watchdog
  for attempt in 1 2 3; do
    rc=0
    start_once || rc=$?
    case "$rc" in
      0) echo "bootstrap=$(cat "$bootstrap_file")"; return 0 ;;
      75) say "port taken while starting (attempt $attempt), retrying with new ports" ;;
      *) die "the Kafka broker failed to start (logs in $logs)" ;;
    esac
  done
  log_tail >&2
  die "the Kafka broker failed to start: ports kept being taken"
}

cmd_stop() {
  local pid
  if pid="$(broker_pid)"; then
    say "stopping broker (pid $pid)"
    kill_broker "$pid"
    rm -f "$pid_file"
    stop_watchdog
    say "stopped"
  else
    rm -f "$pid_file"
    stop_watchdog
    say "not running"
  fi
}

cmd_status() {
  local pid
  if pid="$(broker_pid)"; then
    echo "running (pid $pid, run dir $run)"
    echo "bootstrap=$(cat "$bootstrap_file")"
    return 0
  fi
  echo "not running (run dir $run)"
  return 3
}

[ $# -eq 1 ] || usage
case "$1" in
  start | stop)
    mkdir -p "$run"
    exec 9>"$run/.lock"
    flock -w 600 9 || die "timed out waiting for another kafka.sh on $run"
    "cmd_$1"
    ;;
  status) cmd_status ;;
  *) usage ;;
esac
