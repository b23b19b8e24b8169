# Per request of the probe (tune70-tune73; bench --keep-traces): when the
# busy process's last kernel before the probe's ended, relative to the
# request. Usage: python3 busyend.py RUN_DIR...
import sys, struct, bisect
def rd(p):
    b=open(p,'rb').read(); v=struct.unpack('<%dQ'%(len(b)//8),b); return list(zip(v[0::2],v[1::2]))
def q(v,p): v=sorted(v); return v[min(len(v)-1,int(len(v)*p))]
for d in sys.argv[1:]:
    pr=rd(d+'/traces/probe-hog100-gpusched-0.trace'); bz=rd(d+'/traces/probe-hog100-gpusched-1.trace')
    lat=[tuple(map(float,l.split())) for l in open(d+'/traces/probe-hog100-gpusched-0.trace.lat')]
    bs=[s for s,_ in bz]; rel=[]
    for i in range(min(len(pr),len(lat))):
        st,en=pr[i]; req=en-lat[i][0]*1e3
        m=bisect.bisect_left(bs,st)
        if m==0: continue
        be=bz[m-1][1]; rel.append((be-req)/1e3)
    print("%-8s busy end - request: p10 %.0f p50 %.0f p90 %.0f p99 %.0f" % (d, q(rel,.1), q(rel,.5), q(rel,.9), q(rel,.99)))
