# Shell functions shared by bin/demo and bin/benchmark; sourced (bash), after $root (the repository
# folder) is set. Messages are prefixed with the name of the script that sources this file.

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

log() { printf '%s %s: %s\n' "$(date +%H:%M:%S)" "${0##*/}" "$*"; }
die() { log "FAILED: $*" >&2; exit 1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
await_port() { # port seconds pid what
  local deadline=$((SECONDS + $2))
  while ! port_in_use "$1"; do
    kill -0 "$3" 2>/dev/null || die "$4 exited before listening on $1"
    [ "$SECONDS" -lt "$deadline" ] || die "$4 not listening on $1 after $2 s"
    sleep 0.2
  done
}

# --- process bookkeeping: every process started with start_bg, stopped newest first by stop_from -------
pids=() names=()
start_bg() { # name logfile command...
  local name="$1" logfile="$2"; shift 2
  "$@" >"$logfile" 2>&1 &
  pids+=("$!") names+=("$name")
  log "started $name (pid $!, log ${logfile#$root/})"
}
stop_from() { # index: stops the processes started at or after it, newest first (SIGTERM; SIGKILL after 30 s)
  local i pid deadline
  for ((i=${#pids[@]}-1; i>=$1; i--)); do
    pid="${pids[$i]}"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      deadline=$((SECONDS + 30))
      while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then
        log "${names[$i]} ignored SIGTERM for 30 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true
      fi
      log "stopped ${names[$i]}"
    fi
    wait "$pid" 2>/dev/null || true
  done
  pids=("${pids[@]:0:$1}") names=("${names[@]:0:$1}")
}
