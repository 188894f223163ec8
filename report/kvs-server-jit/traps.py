#!/usr/bin/env python3
"""traps.py LOGCOMPILATION.xml FROM TO: the uncommon traps a JVM hit between FROM and TO seconds of its
life (-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation), with the method whose compiled code they
ended and where in it they were."""
import re, sys
f = open(sys.argv[1]).read()
lo, hi = float(sys.argv[2]), float(sys.argv[3])
tasks = {}
for m in re.finditer(r"<task (compile_id='(\d+)'[^>]*)>", f):
    a = dict(re.findall(r"(\w+)='([^']*)'", m.group(1)))
    tasks[a['compile_id']] = (a.get('method'), a.get('level'))
for m in re.finditer(r"<uncommon_trap ([^>]*stamp='([\d.]+)'[^>]*)>(.*?)</uncommon_trap>", f, re.S):
    st = float(m.group(2))
    if not lo <= st <= hi:
        continue
    a = dict(re.findall(r"(\w+)='([^']*)'", m.group(1)))
    method, level = tasks.get(a.get('compile_id'), (None, None))
    jv = re.findall(r"<jvms bci='(\d+)' method='([^' ]*) ([^' ]*)", m.group(3))
    where = " <- ".join(f"{c.split('/')[-1]}.{n}@{b}" for b, c, n in jv[:3])
    print(f"{st:8.3f} {a.get('reason'):16} {method.split(' ')[0].split('/')[-1] + '.' + method.split(' ')[1] if method else '?'}: {where}")
