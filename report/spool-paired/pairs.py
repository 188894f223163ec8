#!/usr/bin/env python3
"""Per-round ratios of a `bin/benchmark --paired R` run: python3 pairs.py results.tsv [system-a system-b]

Each round measured both systems back to back (recorded as one "start"); the ratio b/a of delivered
mails/s per round, their median, and a distribution-free 90 % interval for the median (order
statistics of the binomial(n, 1/2): no assumption on the spread of the machine's speed)."""
import math
import sys

path = sys.argv[1]
a, b = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("memory", "kvs")
rate = {}
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.rstrip("\n").split("\t") if "=" in kv)
    if f.get("phase") == "max":
        rate[(f["system"], int(f["start"]))] = float(f["delivered_per_s"])
rounds = sorted({s for (_, s) in rate})
ratios = []
print(f"| round | {a} delivered/s | {b} delivered/s | {b} / {a} |")
print("|---:|---:|---:|---:|")
for r in rounds:
    if (a, r) in rate and (b, r) in rate:
        x = rate[(b, r)] / rate[(a, r)]
        ratios.append(x)
        print(f"| {r} | {rate[(a, r)]:.1f} | {rate[(b, r)]:.1f} | {x:.3f}x |")
n = len(ratios)
s = sorted(ratios)
med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
# largest k with P(Binomial(n, 1/2) < k) <= 5 %: [s[k-1], s[n-k]] covers the median with >= 90 %
k, cum = 0, 0.0
while True:
    p = math.comb(n, k) / 2 ** n
    if cum + p > 0.05:
        break
    cum += p
    k += 1
print()
if k >= 1:
    print(f"median of {n} round ratios: {med:.3f}x; {100 * (1 - 2 * cum):.1f} % interval for the median: "
          f"{s[k - 1]:.3f}x - {s[n - k]:.3f}x")
else:
    print(f"median of {n} round ratios: {med:.3f}x (too few rounds for a 90 % interval)")
