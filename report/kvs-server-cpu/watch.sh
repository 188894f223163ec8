#!/usr/bin/env bash
# watch.sh OUT: waits for the newest kvs work folder's max phase; per-thread CPU of both nodes at its start and +30 s; also at warm-up start
out=$1; HOST=http://127.0.0.1; sleep 8
d=$(ls -dt /tmp/james-kvs-bench.*/kvs-1 | head -1); echo $d > $out/dir
p1=$(grep -o 'kvs-node1 (pid [0-9]*' $out/bench.log | grep -o '[0-9]*$'); p2=$(grep -o 'kvs-node2 (pid [0-9]*' $out/bench.log | grep -o '[0-9]*$')
echo "$p1 $p2" >> $out/dir
for i in $(seq 1 600); do grep -q "warm-up" $d/load.log 2>/dev/null && break; sleep 0.5; done
/tmp/srvcpu/threads.sh $p1 $out/w0-n1; /tmp/srvcpu/threads.sh $p2 $out/w0-n2
for i in $(seq 1 800); do grep -q "max throughput" $d/load.log 2>/dev/null && break; sleep 0.5; done
date -u +%T >> $out/dir
m1=$(grep "^metrics.port=" $d/node1.properties | tail -1 | cut -d= -f2); m2=$(grep "^metrics.port=" $d/node2.properties | tail -1 | cut -d= -f2); curl -s $HOST:$m1/metrics > $out/m0-n1; curl -s $HOST:$m2/metrics > $out/m0-n2; s0=$(cat $d/sink.stats); /tmp/srvcpu/threads.sh $p1 $out/t0-n1; /tmp/srvcpu/threads.sh $p2 $out/t0-n2; sleep 29.5
curl -s $HOST:$m1/metrics > $out/m1-n1; curl -s $HOST:$m2/metrics > $out/m1-n2; echo "$s0 / $(cat $d/sink.stats)" >> $out/dir; /tmp/srvcpu/threads.sh $p1 $out/t1-n1; /tmp/srvcpu/threads.sh $p2 $out/t1-n2; date -u +%T >> $out/dir
