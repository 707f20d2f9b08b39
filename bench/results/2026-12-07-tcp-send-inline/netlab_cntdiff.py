import sys
def rows(f):
    r={}
    for l in open(f):
        p=l.split()
        if p and p[0].startswith('h') and p[0]!='host': r[p[0]]=[int(x) for x in p[1:]]
    return r
a=rows(sys.argv[1]); b=rows(sys.argv[2])
tot=[0]*5
for h in b:
    d=[y-x for x,y in zip(a.get(h,[0]*5),b[h])]
    tot=[t+x for t,x in zip(tot,d)]
print("   txMB %.1f rxMB %.1f txpk %d rxpk %d drops %d" % (tot[0]/1e6,tot[1]/1e6,tot[2],tot[3],tot[4]))
