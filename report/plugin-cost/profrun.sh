#!/bin/bash
# usage: profrun.sh <out-dir> <seconds> <benchmark args...>
OUT=$1; shift; SECS=$1; shift
: "${ASYNC_PROFILER:?set ASYNC_PROFILER to linux-x64/libasyncProfiler.so (see README.md)}" "${ATTACH_CP:?set ATTACH_CP to the folder of the compiled Attach.class}"
mkdir -p $OUT
cd "$(dirname "$0")/../.."
bin/benchmark "$@" --keep --out $OUT/report > $OUT/bench.log 2>&1 &
while ! grep -q "started load generator" $OUT/bench.log; do sleep 1; done
LOAD=$(grep -o 'started load generator (pid [0-9]*, log [^)]*' $OUT/bench.log | sed 's/.*log //')
while ! grep -q "max throughput" $LOAD; do sleep 1; done
sleep 3
PIDS=$(grep -o 'started kvs-node[0-9] (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$' | tr '\n' ' ')
JP=$(grep -o 'started james (kvs) (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$')
for p in $PIDS $JP; do java -cp "$ATTACH_CP" Attach $p "$ASYNC_PROFILER" start,event=cpu,interval=500us,threads >> $OUT/attach.log 2>&1; done
sleep $SECS
for p in $PIDS $JP; do java -cp "$ATTACH_CP" Attach $p "$ASYNC_PROFILER" stop,file=$OUT/prof-$p.collapsed,collapsed >> $OUT/attach.log 2>&1; done
echo "nodes $PIDS james $JP" > $OUT/pids
wait
