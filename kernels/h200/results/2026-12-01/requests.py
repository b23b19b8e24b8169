# Per request of the probe (tune61, tune62; bench --keep-traces): the
# distribution of its latency, launch call, lateness of its wake-up, the
# busy kernels started after the request and the GPU gap before its
# kernel; its slowest 15. Usage: python3 requests.py RUN_DIR
import sys, struct, bisect
d=sys.argv[1]
def rd(p):
    b=open(p,'rb').read(); v=struct.unpack('<%dQ'%(len(b)//8),b); return list(zip(v[0::2],v[1::2]))
pr=rd(d+'/traces/probe-hog100-gpusched-0.trace'); bz=rd(d+'/traces/probe-hog100-gpusched-1.trace')
lat=[tuple(map(float,l.split())) for l in open(d+'/traces/probe-hog100-gpusched-0.trace.lat')]
n=min(len(pr),len(lat)); bs=[s for s,_ in bz]
rows=[]
for i in range(n):
    st,en=pr[i]; l,call,woke=lat[i]
    req=en-l*1e3
    k=bisect.bisect_right(bs,req); m=bisect.bisect_left(bs,st)
    # busy kernel gaps before probe start: idle time of GPU in the 1 ms before req
    prev_end = max([e for _,e in bz[max(0,m-3):m]] or [req])
    rows.append((l,call,woke,m-k,(st-prev_end)/1e3, (st-req)/1e3, i))
import statistics as S
def q(v,p): v=sorted(v); return v[min(len(v)-1,int(len(v)*p))]
print(d,"n",n)
for nm,ix in (("lat",0),("call",1),("woke",2),("after",3),("gap",4)):
    v=[r[ix] for r in rows]; print(" %-5s p50 %.0f p90 %.0f p99 %.0f max %.0f"%(nm,q(v,.5),q(v,.9),q(v,.99),max(v)))
rows.sort()
print(" slowest 15: lat call woke after gap idx")
for r in rows[-15:]: print("  %.0f %.0f %.0f %d %.0f i=%d"%(r[0],r[1],r[2],r[3],r[4],r[6]))
# correlation: requests with woke>100
w=[r for r in rows if r[2]>100]; print(" woke>100:",len(w),"mean lat %.0f call %.0f"%(S.mean(r[0] for r in w),S.mean(r[1] for r in w)) if w else "")
c=[r for r in rows if r[1]>100]; print(" call>100:",len(c),"mean lat %.0f woke %.0f"%(S.mean(r[0] for r in c),S.mean(r[2] for r in c)) if c else "")
