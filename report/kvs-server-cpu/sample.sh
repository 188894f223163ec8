#!/usr/bin/env bash
# sample.sh OUTDIR : waits for a bin/benchmark kvs work folder, then every 1 s (max 900 s) records
# epoch, sink messages, per node: utime+stime ticks, and kvs_requests_total / block / commit lines.
out="$1"; mkdir -p "$out"; : > "$out/samples.txt"
end=$((SECONDS+900))
while [ $SECONDS -lt $end ]; do
  d=$(ls -dt /tmp/james-kvs-bench.*/kvs-1 2>/dev/null | head -1)
  [ -n "$d" ] && [ -f "$d/node2.properties" ] && [ "$d" -nt "$out" ] && break
  sleep 1
done
echo "dir=$d" > "$out/dir"
ports=(); for n in 1 2; do ports+=($(grep '^metrics.port=' "$d/node$n.properties" | tail -1 | cut -d= -f2)); done
pids=(); while [ ${#pids[@]} -lt 2 ] && [ $SECONDS -lt $end ]; do
  pids=(); for n in 1 2; do p=$(pgrep -f -- "-jar .*kvs-server.jar $d/node$n.properties" | head -1); [ -n "$p" ] && pids+=($p); done; sleep 1; done
echo "pids=${pids[*]} ports=${ports[*]}" >> "$out/dir"
while [ $SECONDS -lt $end ]; do
  kill -0 ${pids[0]} 2>/dev/null || break
  t=$(date +%s.%N); m=$(cat "$d/sink.stats" 2>/dev/null | sed 's/.*messages=\([0-9]*\).*/\1/')
  line="T $t sink=$m"
  for i in 0 1; do
    c=$(awk '{print $14+$15}' /proc/${pids[$i]}/stat 2>/dev/null)
    line="$line cpu$((i+1))=$c"
  done
  echo "$line" >> "$out/samples.txt"
  for i in 0 1; do
    curl -s -m 2 "http://127.0.0.1:${ports[$i]}/metrics" | grep -E '^kvs_(requests_total|block_requests|commit_seconds_count|block_seconds_count|bytes)' | sed "s/^/N$((i+1)) /" >> "$out/samples.txt"
  done
  sleep 1
done
