import sys,collections
d=sys.argv[1]; mails=float(sys.argv[2])
def load(f):
    r={}
    for line in open(f):
        if '|' not in line: continue
        head,io,cs,cpu=line.rstrip('\n').split('|')
        p,tid,name=head.split(' ',2)
        io=[int(x) for x in io.split()] if io.strip() else [0,0]
        cs=[int(x) for x in cs.split()] if cs.strip() else [0,0]
        r[(p,tid)]=(name,io,cs,int(cpu) if cpu.strip() else 0)
    return r
a=load(d+'/s1'); b=load(d+'/s2')
agg=collections.defaultdict(lambda:[0,0,0,0,0])
for k,(name,io,cs,cpu) in b.items():
    if k not in a: continue
    n0,io0,cs0,cpu0=a[k]
    import re
    nm=re.sub(r'-\d+$','-N',name); nm=re.sub(r'#\d+','#N',nm)
    g=agg[(k[0],nm)]
    g[0]+=io[0]-io0[0]; g[1]+=io[1]-io0[1]; g[2]+=cs[0]-cs0[0]; g[3]+=cs[1]-cs0[1]; g[4]+=cpu-cpu0
print(f"{'pid':>7} {'thread':28} {'rd/mail':>8} {'wr/mail':>8} {'vcs/mail':>8} {'ivcs/mail':>9} {'cpu ms/mail':>11}")
for (p,nm),g in sorted(agg.items(), key=lambda x:-x[1][4]):
    if g[4]==0 and g[0]+g[1]==0: continue
    print(f"{p:>7} {nm:28} {g[0]/mails:8.2f} {g[1]/mails:8.2f} {g[2]/mails:8.2f} {g[3]/mails:9.2f} {g[4]*10/mails:11.4f}")
