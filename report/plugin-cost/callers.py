import sys, collections
f = sys.argv[1]; tf = sys.argv[2]; pat = sys.argv[3]; depth = int(sys.argv[4]) if len(sys.argv)>4 else 3
c = collections.Counter(); tot=0
for line in open(f):
    stack, n = line.rstrip().rsplit(' ', 1); n = int(n)
    fr = stack.split(';')
    if tf not in fr[0]: continue
    idx = [i for i,x in enumerate(fr) if pat in x]
    if not idx: continue
    i = idx[0]; tot += n
    # nearest java frames above
    java = [x for x in fr[1:i] if '/' in x and not x.endswith('_[k]')]
    c[' < '.join(reversed(java[-depth:]))] += n
print("total", tot)
for k, n in c.most_common(12): print(f"  {n:5d} {k}")
