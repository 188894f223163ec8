import sys, collections, re
f = sys.argv[1]; thread_filter = sys.argv[2] if len(sys.argv) > 2 else None
threads = collections.Counter(); selfc = collections.Counter(); incl = collections.Counter(); total = 0
for line in open(f):
    stack, n = line.rstrip().rsplit(' ', 1); n = int(n)
    frames = stack.split(';')
    t = frames[0]
    tn = re.sub(r'\s*tid=\d+', '', t)
    tn = re.sub(r'-\d+\]', '-N]', tn)
    threads[tn] += n
    if thread_filter and thread_filter not in t: continue
    total += n
    selfc[frames[-1]] += n
    for fr in set(frames[1:]):
        incl[fr] += n
print("threads:")
for t, n in threads.most_common(15): print(f"  {n:6d} {t}")
print(f"filter={thread_filter} total={total}")
print("self:")
for fr, n in selfc.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 30): print(f"  {100*n/total:5.1f}% {fr}")
