#!/usr/bin/env python3
"""per-mail.py OUT: the two snapshots of sample.sh as figures per mail (mails = PUTs on the first node / 2)."""
import re, sys, os
out = sys.argv[1]
def load(name):
    v = {}
    for line in open(os.path.join(out, name)):
        parts = line.split()
        if parts[0] in ("flushes", "writes"):
            v[parts[0]] = float(parts[1])
        elif parts[0].startswith("node:"):
            m = re.match(r'(\S+)\{.*?op="(\w+)".*\}\s+(\S+)', " ".join(parts[1:]))
            if m:
                v[(parts[0], m.group(2))] = float(m.group(3))
            elif parts[1].startswith("kvs_commit_seconds_count"):
                v[(parts[0], "commits")] = float(parts[2])
            elif parts[1].startswith("kvs_fsyncs_total"):
                v[(parts[0], "fsyncs")] = float(parts[2])
            elif parts[1].startswith("kvs_fsync_deferred_total"):
                v[(parts[0], "deferred")] = float(parts[2])
        elif parts[0].startswith("cpu:"):
            v[parts[0]] = float(parts[1])
    return v
a, b = load("s1"), load("s2")
t = float(open(os.path.join(out, "t2")).read()) - float(open(os.path.join(out, "t1")).read())
d = {k: b[k] - a.get(k, 0) for k in b}
nodes = sorted({k[0] for k in d if isinstance(k, tuple)})
mails = d[(nodes[0], "PUT")] / 2
print(f"window {t:.1f} s, mails {mails:.0f} ({mails / t:.1f}/s)")
print(f"device flushes per mail (both nodes): {d['flushes'] / mails:.2f}; device writes per mail: {d['writes'] / mails:.2f}")
for n in nodes:
    ops = {k[1]: v for k, v in d.items() if isinstance(k, tuple) and k[0] == n and v > 0}
    row = ", ".join(f"{op} {v / mails:.2f}" for op, v in sorted(ops.items()))
    print(f"{n} per mail: {row}")
cpus = [k for k in d if isinstance(k, str) and k.startswith("cpu:")]
hz = os.sysconf("SC_CLK_TCK")
for c in cpus:
    print(f"{c} CPU per mail {d[c] / hz / mails * 1000:.3f} ms")
