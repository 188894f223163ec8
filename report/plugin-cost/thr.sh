#!/bin/bash
# (report/plugin-cost) usage: thr.sh ROOT OUT, then python3 scan.py OUT $(cat OUT/mails)
# thr.sh ROOT OUT: bin/benchmark (kvs only, page cache, 1k) from ROOT; per-thread counters of James and the nodes over 12 s of the max phase, mails from the nodes' PUT counters
SNAP="$(cd "$(dirname "$0")" && pwd)/snap.py"
ROOT=$1; OUT=$2; mkdir -p $OUT; cd $ROOT
bin/benchmark --mix 1k --sweep "" --systems kvs --keep --out $OUT/report > $OUT/bench.log 2>&1 &
until sed -n '/started kvs-node1/,$p' $OUT/bench.log | grep -q "started load generator"; do sleep 1; done
LOAD=$(sed -n '/started kvs-node1/,$p' $OUT/bench.log | grep -o 'started load generator (pid [0-9]*, log [^)]*' | head -1 | sed 's/.*log //')
until grep -q "max throughput" $LOAD; do sleep 0.5; done
sleep 1
work=$(dirname $LOAD)
PIDS="$(grep -o 'started kvs-node[0-9] (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$' | tr '\n' ' ') $(grep -o 'started james (kvs) (pid [0-9]*' $OUT/bench.log | grep -o '[0-9]*$')"
port=$(grep -h '^metrics.port=' $work/node1.properties | tail -1 | cut -d= -f2)
puts() { curl -s http://127.0.0.1:$port/metrics | grep '^kvs_requests_total{op="PUT"}' | awk '{print $2}'; }
snap() { python3 "$SNAP" $PIDS; }
p1=$(puts); snap > $OUT/s1; sleep 12; snap > $OUT/s2; p2=$(puts)
echo "$PIDS" > $OUT/pids
python3 -c "print(($p2 - $p1) / 2)" > $OUT/mails
wait
