#!/usr/bin/env python3
# The analyses of tune38 (traces from tune38-trace.diff). Usage, on the
# files of tune38-trace.tgz (a.629 the probe, a.630 the busy process):
#   tune38-analyse.py legs DIR a 629 630    hop times: send -> arbiter, reply -> wake
#   tune38-analyse.py slow DIR a 629 630 400  one line per request slower than 400 us
import sys
mode = sys.argv.pop(1)
if mode == "legs":
    import sys,bisect
    d,pre,pp,pb=sys.argv[1:5]
    def load(p): return [(int(t)/1000,int(c),int(a)) for t,c,a in (l.split() for l in open(p))]
    A=load(f'{d}/{pre}.arb'); P=load(f'{d}/{pre}.{pp}'); B=load(f'{d}/{pre}.{pb}')
    recv={}  # pid -> list of recv times
    rep={}
    for t,c,a in A:
        if c==101: recv.setdefault(a//256,[]).append(t)
        if c==103: rep.setdefault(a//16,[]).append(t)
    def pct(v):
        v=sorted(v); n=len(v)
        return 'n=%d p50=%.0f p90=%.0f p99=%.0f max=%.0f'%(n,v[n//2],v[int(n*.9)],v[min(n-1,int(n*.99))],v[-1])
    def sends(E,codes):
        return [t for t,c,a in E if c in codes]
    for name,E,pid in (('probe',P,int(pp)),('busy',B,int(pb))):
        R=recv.get(pid,[]); 
        dl=[]
        for s in sends(E,(70,51,50,60,61)):
            i=bisect.bisect_left(R,s)
            if i<len(R): dl.append(R[i]-s)
        print(name,'send->arb recv',pct(dl))
        # reply -> client return
        Rp=rep.get(pid,[])
        wl=[]
        for t,c,a in E:
            if c in (71,52):
                i=bisect.bisect_right(Rp,t)-1
                if i>=0: wl.append(t-Rp[i])
        print(name,'arb reply->client wake',pct(wl))
    # arbiter sleep lengths and wake->recv
else:
    import sys,bisect
    d,pre,pp,pb=sys.argv[1:5]; thr=float(sys.argv[5])
    pp=int(pp); pb=int(pb)
    def load(p): return [(int(t)/1000,int(c),int(a)) for t,c,a in (l.split() for l in open(p))]
    A=load(f'{d}/{pre}.arb'); P=load(f'{d}/{pre}.{pp}'); B=load(f'{d}/{pre}.{pb}')
    req=[tuple(map(float,l.split())) for l in open(f'{d}/req.{pp}')]
    def ev(E,codes,lo,hi,f=None):
        return [(t,c,a) for t,c,a in E if lo<=t<hi and c in codes and (f is None or f(a))]
    # index by time for speed
    import collections
    def window(E,lo,hi):
        T=[e[0] for e in E]
        return E[bisect.bisect_left(T,lo):bisect.bisect_left(T,hi)]
    PT=[e[0] for e in P]; BT=[e[0] for e in B]; AT=[e[0] for e in A]
    def win(E,T,lo,hi): return E[bisect.bisect_left(T,lo):bisect.bisect_left(T,hi)]
    n=0; cats=collections.Counter()
    for s,lat in req:
        if lat<=thr: continue
        n+=1
        p=win(P,PT,s-2500,s+lat); b=win(B,BT,s-2500,s+lat); a=win(A,AT,s-2500,s+lat)
        # the probe's ask/acquire that served this request: last 70 or 51 before the probe's G after s
        pg=[e for e in p if e[1]==2 and e[0]>=s]
        g=pg[0][0]-s if pg else None
        asks=[e for e in p if e[1] in (70,51) and e[0]<= (pg[0][0] if pg else s+lat)]
        ask=asks[-1] if asks else None
        ak=ask[0]-s if ask else None
        kind={70:'early',51:'acq'}[ask[1]] if ask else '-'
        rc=[e for e in a if e[1]==101 and e[2]//256==pp and ask and e[0]>=ask[0]]
        r=rc[0][0]-s if rc else None
        ys=[e for e in b if e[1] in (50,60) and ask and e[0]>=ask[0]]
        y=ys[0][0]-s if ys else None
        posted=ys[0][2]/1000-s if ys and ys[0][2] else None
        rb=[e for e in a if e[1]==101 and e[2]//256==pb and ys and e[0]>=ys[0][0]]
        yr=rb[0][0]-s if rb else None
        rp=[e for e in a if e[1]==103 and e[2]//16==pp and ask and e[0]>=ask[0]]
        rpt=rp[0][0]-s if rp else None
        gr=[e for e in p if e[1] in (71,52) and ask and e[0]>=ask[0]]
        grt=gr[0][0]-s if gr else None
        busyL=len([e for e in b if e[1]==2 and s<=e[0]<(pg[0][0] if pg else s)])
        f=lambda x: '%6.0f'%x if x is not None else '     -'
        print('lat %5.0f %-5s ask %s arbrecv %s posted %s busyyield %s arbrecv %s reply %s probegrant %s probeG %s busyLaunchesAfterReq %d'%(lat,kind,f(ak),f(r),f(posted),f(y),f(yr),f(rpt),f(grt),f(g),busyL))
    print(n,'slow of',len(req))
