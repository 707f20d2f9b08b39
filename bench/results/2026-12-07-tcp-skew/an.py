import sys, glob, statistics as st
d=sys.argv[1]; n=len(glob.glob(d+'/*.txt'))
T=[[tuple(map(float,l.split())) for l in open(f'{d}/{r}.txt')] for r in range(n)]
it=len(T[0])
own=[[T[r][i][1]-T[r][i][0] for i in range(it)] for r in range(n)]
mx=[max(own[r][i] for r in range(n)) for i in range(it)]
span=[max(T[r][i][1] for r in range(n))-T[0][i][0] for i in range(it)]
exitoff=[[T[r][i][0]-T[0][i][0] for i in range(it)] for r in range(n)]
endoff=[[T[r][i][1]-T[0][i][0] for i in range(it)] for r in range(n)]
print(f"max {st.median(mx):7.1f} span {st.median(span):7.1f} | own " + " ".join(f"{st.median(own[r]):6.1f}" for r in range(n)) + " | exit-root " + " ".join(f"{st.median(exitoff[r]):6.1f}" for r in range(n))+ " | end-rootstart " + " ".join(f"{st.median(endoff[r]):6.1f}" for r in range(n)))
