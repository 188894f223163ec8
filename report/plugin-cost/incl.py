import sys, collections
f = sys.argv[1]; tf = sys.argv[2]; pats = sys.argv[3:]
total = 0; c = collections.Counter()
for line in open(f):
    stack, n = line.rstrip().rsplit(' ', 1); n = int(n)
    if tf not in stack.split(';')[0]: continue
    total += n
    for p in pats:
        if p in stack: c[p] += n
print("total", total)
for p in pats: print(f"  {100*c[p]/total:5.1f}% {p}")
