import sys,re,collections
# diff.py samples.txt sinkFrom sinkTo : first sample with sink>=from, first with sink>=to
f,a,b=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
samples=[];cur=None
for line in open(f):
    p=line.split()
    if p[0]=='T':
        cur={'t':float(p[1])}
        for kv in p[2:]:
            k,v=kv.split('='); cur[k]=float(v) if v else 0
        samples.append(cur)
    elif cur is not None:
        cur[p[0]+' '+p[1]]=float(p[2])
def pick(x):
    return next(s for s in samples if s['sink']>=x)
s0,s1=pick(a),pick(b)
mails=s1['sink']-s0['sink']; dt=s1['t']-s0['t']
print(f"window {dt:.1f}s mails {mails:.0f} ({mails/dt:.0f}/s)")
for n in ('1','2'):
    print(f"node{n}: cpu {(s1['cpu'+n]-s0['cpu'+n])*10/mails:.3f} ms/mail")
    for k in sorted(s1):
        if k.startswith('N'+n+' ') :
            d=s1[k]-s0.get(k,0)
            if d: print(f"   {k[3:]:55s} {d:10.0f} {d/mails:8.3f}/mail")
