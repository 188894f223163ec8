#!/usr/bin/env bash
# threads.sh PID OUT: per-thread-name utime+stime ticks, and "<name> [sys]" stime ticks
for t in /proc/$1/task/*; do
  n=$(cat $t/comm 2>/dev/null); read u s < <(awk '{print $14, $15}' $t/stat 2>/dev/null); echo -e "$n\t$((u+s))"; echo -e "$n [sys]\t$s"; done | awk -F'\t' '{a[$1]+=$2} END{for(k in a) print k"\t"a[k]}' | sort > $2
