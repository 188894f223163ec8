import sys,re,os,glob
out=sys.argv[1]
d=open(out+'/dir').read().split('\n')[0]
load=open(d+'/load.log').read()
m=re.search(r'max: \d+ accepted .*?delivered (\d+) .*?= ([\d.]+)/s.*?cpu \{(.*?)\}',load)
mails=int(m.group(1)); rate=float(m.group(2)); cpu=dict(kv.split('=') for kv in m.group(3).split(', '))
print(f"{out}: max phase delivered {mails} mails, {rate}/s; James {float(cpu['james'])/mails*1000:.3f} ms/mail")
def mets(f):
    r={}
    if not os.path.exists(f): return r
    for l in open(f):
        if l.startswith('kvs_') and not l.startswith('kvs_queue'):
            k,v=l.rsplit(' ',1); r[k]=float(v)
    return r
for n in ('1','2'):
    print(f" node{n}: {float(cpu['kvs'+n])/mails*1000:.3f} ms/mail (process, bench's /proc)")
    t0=dict(l.rstrip('\n').split('\t') for l in open(f"{out}/t0-n{n}")); t1=dict(l.rstrip('\n').split('\t') for l in open(f"{out}/t1-n{n}"))
    ths=sorted(((int(t1[k])-int(t0.get(k,0)),k) for k in t1),reverse=True)
    print("   threads (ms/mail, watcher's 29.5 s window):", ', '.join(f"{k} {v*10/mails:.3f}" for v,k in ths if v>0))
    a,b=mets(f"{out}/m0-n{n}"),mets(f"{out}/m1-n{n}")
    if a and b:
        dm=[int(x) for x in open(out+'/dir').read().split('\n') if '/' in x for x in re.findall(r'messages=(\d+)',x)]
        mm=dm[1]-dm[0] if len(dm)==2 else mails
        row=[]
        for k in sorted(b):
            dv=b[k]-a.get(k,0)
            if dv and ('requests_total' in k or k.endswith('_count') or 'block_requests_sum' in k):
                row.append(f"{k.replace('kvs_requests_total','').replace('{op=','').replace('}','')} {dv/mm:.3f}")
        print(f"   per mail (sink window {mm} mails):", '; '.join(row))
