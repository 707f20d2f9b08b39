import csv,collections,statistics,sys,os
R=os.path.dirname(os.path.abspath(__file__))
def load(path):
    d={}
    if not os.path.exists(path): return d
    for r in csv.reader(open(path)):
        if r[0]=='impl': continue
        d[(r[0],int(r[1]),int(r[2]))]=float(r[3])
    return d
def fmt(b):
    for u,s in ((1<<30,'G'),(1<<20,'M'),(1<<10,'K')):
        if b>=u: return f"{b//u}{s}"
    return f"{b}"
out=[]
for case,first,rest in (("idle/oversub","{op}","r{r}_{op}"),("busy","busy_{op}","r{r}_busy_{op}")):
  for op in ("broadcast","allreduce"):
    for metric in ("maxrank","span"):
        runs=[load(f"{R}/{first.format(op=op)}/{op}_{metric}.csv")]+[load(f"{R}/{rest.format(r=r,op=op)}/{op}_{metric}.csv") for r in (2,3)]
        keys=sorted({(k[1],k[2]) for run in runs for k in run if k[0]=='openmpi'})
        out.append(f"\n### {case}, {op}, {metric} (µs: rounds 1/2/3, ratio = median obc / median Open MPI)\n")
        out.append("| NP | size | Open MPI | obc | obc in place | obc/OMPI | in place/OMPI |")
        out.append("|---:|---:|---|---|---|---:|---:|")
        for np_,sz in keys:
            if case=="busy" and sz<4096: continue
            cols=[]; meds={}
            for impl in ("openmpi","obc","obc_inplace"):
                vals=[run[(impl,np_,sz)] for run in runs if (impl,np_,sz) in run]
                meds[impl]=statistics.median(vals) if vals else float('nan')
                cols.append(" / ".join(f"{v:.3g}" for v in vals))
            o=meds['openmpi']
            out.append(f"| {np_} | {fmt(sz)} | {cols[0]} | {cols[1]} | {cols[2]} | {meds['obc']/o:.2f} | {meds['obc_inplace']/o:.2f} |")
print("\n".join(out))
