#!/usr/bin/env bash
# A real Apache Kafka broker (KRaft, broker + controller in one JVM) on 127.0.0.1 for development
# and tests, or a cluster of several nodes (LAGASSIGN_KAFKA_NODES). No Docker: the jars come from
# Maven Central (scripts/kafka/pom.xml).
#
#   scripts/kafka.sh start    fetch the jars if needed, start the broker, wait until it answers;
#                             the last line on stdout is  bootstrap=127.0.0.1:PORT
#                             (one 127.0.0.1:PORT per node, comma-separated, for a cluster)
#   scripts/kafka.sh stop     SIGTERM, wait, SIGKILL after a timeout (every node of the run dir)
#   scripts/kafka.sh status   running (exit 0, prints bootstrap=...) or not running (exit 3)
#
# Environment:
#   LAGASSIGN_KAFKA_DIR            run dir (config, data, logs, pid); default .cache/kafka/run
#   LAGASSIGN_KAFKA_START_TIMEOUT  seconds to wait for the broker to answer (default 120)
#   LAGASSIGN_KAFKA_STOP_TIMEOUT   seconds between SIGTERM and SIGKILL (default 30)
#   LAGASSIGN_KAFKA_HEAP_OPTS      JVM heap options (default -Xms256m -Xmx768m)
#   LAGASSIGN_KAFKA_GROUP_DELAY_MS group.initial.rebalance.delay.ms (default 0: tests form groups
#                                  at once; Kafka's own default is 3000)
#   LAGASSIGN_KAFKA_PARENT_PID     if set, the broker is stopped once that process is gone
#                                  (the pytest fixture sets it, so a killed test run leaves no java)
#   LAGASSIGN_KAFKA_NODES          nodes to start (default 1): node 1 is the controller and a
#                                  broker, nodes 2..N are brokers, each its own JVM with its own
#                                  ports, data and logs in <run dir>/node-K (read by start only;
#                                  stop and status act on the nodes the run dir holds)
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
nodes="${LAGASSIGN_KAFKA_NODES:-1}"
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
#
# Node 1 keeps its files at the top of the run dir (server.properties, data/, logs/, kafka.pid),
# as the single-node broker always has; node K > 1 keeps the same names in <run dir>/node-K.
# <run dir>/nodes holds the number of nodes started; none means one.

bootstrap_file="$run/bootstrap"
nodes_file="$run/nodes"

node_dir() { if [ "$1" -eq 1 ]; then echo "$run"; else echo "$run/node-$1"; fi; }

started_nodes() {  # the number of nodes of the run dir
  local n=1
  [ -f "$nodes_file" ] && n="$(cat "$nodes_file" 2>/dev/null || echo 1)"
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || n=1
  echo "$n"
}

# The pid in node $1's pid file, if that process is alive and is that node (guards against pid
# reuse).
broker_pid() {
  local pid dir
  dir="$(node_dir "$1")"
  [ -f "$dir/kafka.pid" ] || return 1
  pid="$(cat "$dir/kafka.pid" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null \
    | grep -qF -- "kafka.Kafka $dir/server.properties" || return 1
  echo "$pid"
}

running_pids() {  # the pids of every node of the run dir, if every one runs
  local k pid pids=()
  for k in $(seq 1 "$(started_nodes)"); do
    pid="$(broker_pid "$k")" || return 1
    pids+=("$pid")
  done
  echo "${pids[*]}"
}

free_ports() {  # prints $1 distinct free TCP ports on 127.0.0.1
  "$python" - "$1" <<'EOF'
import socket
import sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

log_tail() {  # the logs of node $1 (default 1), or the files given after it
  local f dir
  dir="$(node_dir "${1:-1}")"
  shift || true
  [ $# -gt 0 ] || set -- "$dir/logs/server.log" "$dir/logs/console.out"
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "----- last 40 lines of $f -----"
    tail -n 40 "$f"
  done
}

write_props() {  # $1 node id, $2 its broker port, $3 the controller port (node 1's), $4 nodes
  local id="$1" dir header roles listeners
  dir="$(node_dir "$id")"
  if [ "$4" -eq 1 ]; then
    header="single-node KRaft broker + controller on 127.0.0.1."
  else
    header="node $id of a $4-node KRaft cluster on 127.0.0.1 (node 1: broker + controller)."
  fi
  if [ "$id" -eq 1 ]; then
    roles=broker,controller
    listeners="PLAINTEXT://127.0.0.1:$2,CONTROLLER://127.0.0.1:$3"
  else
    roles=broker
    listeners="PLAINTEXT://127.0.0.1:$2"
  fi
  cat >"$dir/server.properties" <<EOF
# Written by scripts/kafka.sh: $header
process.roles=$roles
node.id=$id
controller.quorum.bootstrap.servers=127.0.0.1:$3
listeners=$listeners
advertised.listeners=$listeners
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data

# every internal topic with replication factor 1 and few partitions
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
group.initial.rebalance.delay.ms=${LAGASSIGN_KAFKA_GROUP_DELAY_MS:-0}

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
  if [ "$4" -gt 1 ]; then
    # Brokers heartbeat to the controller every 2 s and are fenced (their partitions lose their
    # leader) when none arrives for broker.session.timeout.ms, 9 s by default. On 2 busy cores
    # a controller holding tens of thousands of partitions answered late and fenced every
    # broker ("controller event queue overloaded. Timed out heartbeat from broker N").
    cat >>"$dir/server.properties" <<EOF

# several nodes on 2 shared cores: a late heartbeat must not fence a broker
broker.session.timeout.ms=60000
EOF
  fi
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

stop_watchdog() {  # of node $1
  local wpid file
  file="$(node_dir "$1")/watchdog.pid"
  [ -f "$file" ] || return 0
  wpid="$(cat "$file" 2>/dev/null || true)"
  if [[ "$wpid" =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$wpid/cmdline" 2>/dev/null \
      | grep -qF "kafka-watchdog"; then
    kill -TERM "$wpid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# Stops node $1 (pid $2) once LAGASSIGN_KAFKA_PARENT_PID ($3) is gone; exits when it is gone.
start_watchdog() {
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
  ' kafka-watchdog "$2" "$3" "$stop_timeout" </dev/null >/dev/null 2>&1 8>&- 9>&- &
  echo $! >"$(node_dir "$1")/watchdog.pid"
}

# Stops every node of the run dir: the brokers (2..N) together, then node 1, the controller,
# which a broker's controlled shutdown needs.
stop_nodes() {
  local k pid waits=()
  for k in $(seq "$(started_nodes)" -1 2); do
    if pid="$(broker_pid "$k")"; then
      kill_broker "$pid" &
      waits+=($!)
    fi
  done
  [ "${#waits[@]}" -eq 0 ] || wait "${waits[@]}"
  for k in $(seq "$(started_nodes)" -1 2); do
    rm -f "$(node_dir "$k")/kafka.pid"
    stop_watchdog "$k"
  done
  if pid="$(broker_pid 1)"; then kill_broker "$pid"; fi
  rm -f "$run/kafka.pid"
  stop_watchdog 1
}

# ---------------------------------------------------------------------------------------------
# commands

# One attempt: fresh storage, new ports, start every node, wait. Returns 0 when up, 1 on
# failure, 75 when the ports were taken in between (the caller retries with new ones).
start_once() {
  local ports cport uuid k dir t0 now elapsed up pid bootstrap=""
  local -a bports pids
  rm -rf "$run/data" "$run/logs" "$run/server.properties" "$run/kafka.pid" "$bootstrap_file" \
    "$nodes_file" "$run"/node-*
  read -r -a ports < <(free_ports "$((nodes + 1))")
  [ "${#ports[@]}" -eq "$((nodes + 1))" ] || die "could not pick free ports with $python"
  cport="${ports[0]}"
  bports=("${ports[@]:1}")
  for k in $(seq 1 "$nodes"); do
    dir="$(node_dir "$k")"
    mkdir -p "$dir/data" "$dir/logs"
    write_props "$k" "${bports[k - 1]}" "$cport" "$nodes"
  done
  [ "$nodes" -eq 1 ] || echo "$nodes" >"$nodes_file"

  local tool_opts=(-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
    -Dlog4j2.configurationFile="$log4j_conf" -Dkafka.logs.dir="$run/logs")
  uuid="$("$java" "${tool_opts[@]}" -cp "$lib/*" kafka.tools.StorageTool random-uuid \
    2>"$run/format.log" | tail -n 1)"
  [[ "$uuid" =~ ^[A-Za-z0-9_-]{22}$ ]] || {
    log_tail 1 "$run/format.log" >&2
    die "StorageTool random-uuid failed"
  }
  # one cluster id; node 1 is the whole controller quorum, the brokers join no quorum
  for k in $(seq 1 "$nodes"); do
    dir="$(node_dir "$k")"
    if ! "$java" "${tool_opts[@]}" -cp "$lib/*" kafka.tools.StorageTool format \
        "$([ "$k" -eq 1 ] && echo --standalone || echo --no-initial-controllers)" \
        -t "$uuid" -c "$dir/server.properties" >>"$run/format.log" 2>&1; then
      log_tail 1 "$run/format.log" "$dir/logs/server.log" >&2
      die "StorageTool format failed for node $k"
    fi
  done

  if [ "$nodes" -eq 1 ]; then
    say "starting broker on 127.0.0.1:${bports[0]} (controller 127.0.0.1:$cport), run dir $run"
  else
    say "starting $nodes nodes: brokers on 127.0.0.1:${bports[*]} (controller 127.0.0.1:$cport" \
      "on node 1), run dir $run"
  fi
  t0=$(date +%s%N)
  for k in $(seq 1 "$nodes"); do
    dir="$(node_dir "$k")"
    # shellcheck disable=SC2086  # heap_opts is a list of options
    setsid "$java" $heap_opts -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
      -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
      -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$log4j_conf" -Dkafka.logs.dir="$dir/logs" \
      -cp "$lib/*" kafka.Kafka "$dir/server.properties" \
      </dev/null >"$dir/logs/console.out" 2>&1 8>&- 9>&- &
    pid=$!
    pids[k]=$pid
    echo "$pid" >"$dir/kafka.pid"
    if [ -n "${LAGASSIGN_KAFKA_PARENT_PID:-}" ]; then
      start_watchdog "$k" "$pid" "$LAGASSIGN_KAFKA_PARENT_PID"
    fi
  done

  while :; do
    up=0
    for k in $(seq 1 "$nodes"); do
      dir="$(node_dir "$k")"
      if ! kill -0 "${pids[k]}" 2>/dev/null; then
        stop_nodes
        if grep -qE "BindException|Address already in use" "$dir/logs/server.log" \
            "$dir/logs/console.out" 2>/dev/null; then
          return 75
        fi
        say "node $k exited during start-up"
        log_tail "$k" >&2
        return 1
      fi
      if grep -qF "Kafka Server started" "$dir/logs/server.log" 2>/dev/null \
          && tcp_open "${bports[k - 1]}"; then
        up=$((up + 1))
      fi
    done
    [ "$up" -lt "$nodes" ] || break
    now=$(date +%s%N)
    elapsed=$(((now - t0) / 1000000000))
    if [ "$elapsed" -ge "$start_timeout" ]; then
      say "$((nodes - up)) of $nodes nodes did not answer within ${start_timeout}s; stopping"
      stop_nodes
      for k in $(seq 1 "$nodes"); do log_tail "$k" >&2; done
      return 1
    fi
    sleep 0.25
  done
  now=$(date +%s%N)
  for k in $(seq 1 "$nodes"); do bootstrap+="${bootstrap:+,}127.0.0.1:${bports[k - 1]}"; done
  echo "$bootstrap" >"$bootstrap_file"
  if [ "$nodes" -eq 1 ]; then
    say "broker started (pid ${pids[1]}) in $(((now - t0) / 1000000)) ms"
  else
    say "$nodes nodes started (pids ${pids[*]}) in $(((now - t0) / 1000000)) ms"
  fi
  return 0
}

cmd_start() {
  local pids rc attempt
  [[ "$nodes" =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 32 ] \
    || die "LAGASSIGN_KAFKA_NODES must be a number of nodes from 1 to 32, not '$nodes'"
  if pids="$(running_pids)"; then
    say "already running (pid $pids)"
    echo "bootstrap=$(cat "$bootstrap_file")"
    return 0
  fi
  command -v "$java" >/dev/null || die "java not found (Java 17+ is needed)"
  fetch_jars
  stop_nodes  # what is left of an earlier start that lost a node
  for attempt in 1 2 3; do
    rc=0
    start_once || rc=$?
    case "$rc" in
      0) echo "bootstrap=$(cat "$bootstrap_file")"; return 0 ;;
      75) say "port taken while starting (attempt $attempt), retrying with new ports" ;;
      *) die "the Kafka broker failed to start (logs in $run/logs$([ "$nodes" -eq 1 ] \
           || echo " and $run/node-*/logs"))" ;;
    esac
  done
  log_tail >&2
  die "the Kafka broker failed to start: ports kept being taken"
}

cmd_stop() {
  local pids any=0 k
  for k in $(seq 1 "$(started_nodes)"); do
    if broker_pid "$k" >/dev/null; then any=1; fi
  done
  if [ "$any" -eq 1 ]; then
    pids="$(for k in $(seq 1 "$(started_nodes)"); do broker_pid "$k" || true; done | xargs)"
    say "stopping broker (pid $pids)"
    stop_nodes
    say "stopped"
  else
    stop_nodes
    say "not running"
  fi
}

cmd_status() {
  local pids n
  n="$(started_nodes)"
  if pids="$(running_pids)"; then
    if [ "$n" -eq 1 ]; then
      echo "running (pid $pids, run dir $run)"
    else
      echo "running ($n nodes, pids $pids, run dir $run)"
    fi
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
