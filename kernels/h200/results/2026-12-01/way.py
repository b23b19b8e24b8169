# The probe's way to its early-asked token (from GPUSCHED_DEBUG lines of
# the probe) beside its latency and launch call (.lat; bench
# --keep-traces). Usage: python3 way.py RUN_DIR
import re,sys,glob
r=sys.argv[1]
asks=[]
for l in open(r+'/bench.log'):
    m=re.search(r'asked for the token (\d+) us before our request, granted (-?\d+) us before it',l)
    if m: asks.append((int(m.group(1)),int(m.group(2))))
def q(v,p): v=sorted(v); return v[min(len(v)-1,int(len(v)*p))]
A=[a for a,_ in asks]; W=[a-g for a,g in asks]
lat=[tuple(map(float,l.split())) for l in open(glob.glob(r+'/traces/*-0.trace.lat')[0])]
C=[c for _,c,_ in lat]; L=[l for l,_,_ in lat]
print("%s asks %d asked-before p50 %d; way p50 %d p90 %d p99 %d max %d; call p50 %.0f p90 %.0f p99 %.0f; lat p50 %.0f p90 %.0f p99 %.0f"%(r,len(asks),q(A,.5),q(W,.5),q(W,.9),q(W,.99),max(W),q(C,.5),q(C,.9),q(C,.99),q(L,.5),q(L,.9),q(L,.99)))
