# SPDX-License-Identifier: MIT
"""compare.py LOG_A LOG_B: counts per log and the tests whose outcome differs."""
import collections
import json
import sys
def load(p):
    return {r["test"]: r for r in map(json.loads, open(p))}


logs = [load(p) for p in sys.argv[1:]]
for p, d in zip(sys.argv[1:], logs):
    c = collections.Counter(r["outcome"] for r in d.values())
    print(f"{p}: {len(d)} tests  " + "  ".join(f"{k}={v}" for k, v in sorted(c.items()))
          + f"  sum(test secs)={sum(r['secs'] for r in d.values()):.0f}")
if len(logs) == 2:
    a, b = logs
    for n in sorted(set(a) | set(b)):
        oa, ob = a.get(n, {}).get("outcome"), b.get(n, {}).get("outcome")
        if oa != ob:
            print(f"\n=== {n}: {oa} -> {ob} ({a.get(n,{}).get('secs')}s / {b.get(n,{}).get('secs')}s)")
            for r in (a.get(n), b.get(n)):
                if r and r["outcome"] in ("failed", "error"):
                    lines = [l for l in r["detail"].splitlines() if l.strip()]
                    print("   " + "\n   ".join(lines[-8:]))
