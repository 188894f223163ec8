#!/bin/bash
# usage: sysc.sh OUT benchmark-args... ; samples per-thread syscr/syscw/ctxsw of James + nodes at max-phase start and +20s
OUT=$1; shift; mkdir -p $OUT; cd "$(dirname "$0")/../.."
bin/benchmark "$@" --keep --out $OUT/report > $OUT/bench.log 2>&1 &
while ! grep -q "started load generator" $OUT/bench.log; do sleep 1; done
LOAD=$(grep -o 'started load generator (pid [0-9]*, log [^)]*' $OUT/bench.log | sed 's/.*log //')
while ! grep -q "max throughput" $LOAD; do sleep 0.5; done
sleep 2
PIDS="$(grep -o 'started kvs-node[0-9] (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$' | tr '\n' ' ') $(grep -o 'started james (kvs) (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$')"
SINK=$(grep -o 'started sink (pid [0-9]*' $OUT/bench.log | tail -1 | grep -o '[0-9]*$')
snap() { for p in $PIDS; do for t in /proc/$p/task/*; do n=$(cat $t/comm); io=$(grep -E 'syscr|syscw' $t/io | awk '{print $2}' | tr '\n' ' '); cs=$(grep -E 'voluntary_ctxt_switches' $t/status | awk '{print $2}' | tr '\n' ' '); cpu=$(awk '{print $14+$15}' $t/stat); echo "$p $(basename $t) $n|$io|$cs|$cpu"; done; done; }
snap > $OUT/s1; date +%s.%N > $OUT/t1; sleep 15; snap > $OUT/s2; date +%s.%N > $OUT/t2
echo "$PIDS" > $OUT/pids
wait
