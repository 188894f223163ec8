#!/bin/bash
# usage: sample.sh OUT SECONDS benchmark-args...
# Runs bin/benchmark --keep and, 2 s into the KVS run's max phase and SECONDS later, reads: the device's
# flush requests (/sys/block/<dev>/stat field 16: about one per fsync), every KVS
# node's Prometheus counters (requests per op, commits; mails = PUTs on a node / 2: spool and outgoing)
# and each node's CPU (utime+stime, ticks).
OUT=$1; SECS=$2; shift 2; mkdir -p "$OUT"; cd "$(dirname "$0")/../.."
dev=$(lsblk -no pkname "$(df --output=source /tmp | tail -1)" 2>/dev/null); [ -n "$dev" ] || dev=$(basename "$(df --output=source /tmp | tail -1)")
bin/benchmark "$@" --keep --out "$OUT/report" > "$OUT/bench.log" 2>&1 &
bench=$!
# the KVS run's load generator: the first one started after the KVS nodes
until sed -n '/started kvs-node1/,$p' "$OUT/bench.log" | grep -q "started load generator"; do sleep 1; kill -0 $bench 2>/dev/null || exit 1; done
LOAD=$(sed -n '/started kvs-node1/,$p' "$OUT/bench.log" | grep -o 'started load generator (pid [0-9]*, log [^)]*' | head -1 | sed 's/.*log //')
until grep -q "kvs.*max throughput\|max throughput" "$LOAD" 2>/dev/null; do sleep 0.5; done
sleep 2
work=$(dirname "$LOAD")
ports=$(grep -h '^metrics.port=' "$work"/node*.properties | tail -n +1 | cut -d= -f2)
pids=$(grep -o 'started kvs-node[0-9] (pid [0-9]*' "$OUT/bench.log" | grep -o '[0-9]*$')
snap() {
  awk '{print "flushes", $16; print "writes", $5}' /sys/block/$dev/stat
  for p in $ports; do curl -s "http://127.0.0.1:$p/metrics" | grep -E '^kvs_requests_total|^kvs_commit_seconds_count|^kvs_fsyncs_total' | sed "s/^/node:$p /"; done
  for p in $pids; do echo "cpu:$p $(awk '{print $14+$15}' /proc/$p/stat)"; done
}
snap > "$OUT/s1"; date +%s.%N > "$OUT/t1"; sleep "$SECS"; snap > "$OUT/s2"; date +%s.%N > "$OUT/t2"
wait $bench
echo "bench rc=$?"
