import sys, os
for p in sys.argv[1:]:
    for t in os.listdir(f"/proc/{p}/task"):
        try:
            d = f"/proc/{p}/task/{t}"
            name = open(d + "/comm").read().strip()
            io = {l.split(':')[0]: l.split(':')[1].strip() for l in open(d + "/io")}
            st = {l.split(':')[0]: l.split(':')[1].strip() for l in open(d + "/status")}
            f = open(d + "/stat").read().rsplit(')', 1)[1].split()
            cpu = int(f[11]) + int(f[12])
            print(f"{p} {t} {name}|{io['syscr']} {io['syscw']}|{st['voluntary_ctxt_switches']} {st['nonvoluntary_ctxt_switches']}|{cpu}")
        except (FileNotFoundError, ProcessLookupError, KeyError):
            pass
