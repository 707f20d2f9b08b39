import csv,glob,statistics,collections,sys
top=sys.argv[1]; op=sys.argv[2] if len(sys.argv)>2 else "broadcast"
for k in ("maxrank","span"):
    d=collections.defaultdict(list)
    for f in glob.glob(f"{top}/r*/{op}_{k}.csv"):
        for row in csv.reader(l for l in open(f) if not l.startswith("#")):
            if row[0]=="impl": continue
            d[(int(row[1]),int(row[2]),row[0])].append(float(row[3]))
    print(f"\n{op} {k}: medians (us), obc/openmpi\n")
    print("| ranks | bytes | Open MPI | obc | obc / Open MPI | rounds obc; Open MPI |\n|---:|---:|---:|---:|---:|---|")
    keys=sorted({(n,b) for (n,b,i) in d})
    for n,b in keys:
        o=[v for (nn,bb,i),v in d.items() if nn==n and bb==b and i.startswith("obc")]
        m=d.get((n,b,"openmpi"))
        if not o or not m: continue
        mo,mm=statistics.median(o[0]),statistics.median(m)
        print(f"| {n} | {b} | {mm:.2f} | {mo:.2f} | {mo/mm:.2f} | {' '.join('%.1f'%x for x in o[0])}; {' '.join('%.1f'%x for x in m)} |")
