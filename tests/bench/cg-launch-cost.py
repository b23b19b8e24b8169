#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""libgpusched's host cost per launch, from callgrind's per-thread output.

cg-launch-cost.py FILE...: the files of one run of a client under
`valgrind --tool=callgrind --separate-threads=yes` (one per thread). Prints
the instructions per launch spent in libgpusched on the launching threads
(its own code and the libc and ld.so functions it calls, not the driver's),
the driver calls it makes per launch, the same for the other threads (the
idle thread), and the library's functions by inclusive cost on the
launching threads (the driver's part shown apart). A launch is a call of
one of the library's launch wrappers from outside the library; without the
library in the files, a call of the driver's, and only the whole process's
instructions per launch are printed.
"""
import collections
import re
import sys

LIB = 'libgpusched.so'
DRV = 'libcuda.so'
WRAPPERS = re.compile(r'^(cuLaunch|cuGraphLaunch|pa_cu|dl_cu)')
DRV_LAUNCH = re.compile(r'^(cuLaunch|cuGraphLaunch)')


def is_lib(ob):
    return ob is not None and LIB in ob


def is_drv(ob):
    return ob is not None and DRV in ob


class Thread:
    def __init__(self):
        self.self_ir = collections.Counter()	# (ob, fn) -> Ir
        # (caller ob, fn, callee ob, fn) -> [calls, inclusive Ir]
        self.calls = collections.defaultdict(lambda: [0, 0])

    def launches(self):
        return sum(v[0] for (cob, cfn, ob, fn), v in self.calls.items()
                   if is_lib(ob) and not is_lib(cob) and WRAPPERS.match(fn))


def parse(path):
    t = Thread()
    names = {}

    def name(kind, s):
        m = re.match(r'\((\d+)\)(?: (.*))?$', s)
        if not m:
            return s
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names[key]

    ob = fn = cob = cfn = None
    ncalls = None
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            head, _, rest = line.partition('=')
            if head == 'ob':
                ob = name('ob', rest)
            elif head == 'fn':
                fn = name('fn', rest)
            elif head in ('fl', 'fi', 'fe', 'cfi', 'cfl'):
                name('fl', rest)
            elif head == 'cob':
                cob = name('ob', rest)
            elif head == 'cfn':
                cfn = name('fn', rest)
            elif head == 'calls':
                ncalls = int(rest.split()[0])
            elif line[0] in '0123456789+-*':
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                if ncalls is not None:
                    c = t.calls[(ob, fn, cob or ob, cfn)]
                    c[0] += ncalls
                    c[1] += ir
                    ncalls = None
                    cob = None
                else:
                    t.self_ir[(ob, fn)] += ir
    return t


def library_ir(threads):
    """Ir in the library's code and in what it calls outside the driver."""
    own = ext = 0
    drv = collections.Counter()
    for t in threads:
        own += sum(ir for (ob, fn), ir in t.self_ir.items() if is_lib(ob))
        for (ob, fn, cob, cfn), (n, ir) in t.calls.items():
            if not is_lib(ob) or is_lib(cob):
                continue
            if is_drv(cob):
                drv[cfn] += n
            else:
                ext += ir
    return own, ext, drv


def by_function(threads):
    """Inclusive Ir and calls of each library function, and the part of
    it spent in the driver (apportioned through callees by their ratio)."""
    incl = collections.Counter()
    calls = collections.Counter()
    out = collections.defaultdict(list)	# caller -> [(callee, n, ir)]
    for t in threads:
        for (ob, fn, cob, cfn), (n, ir) in t.calls.items():
            out[(ob, fn)].append(((cob, cfn), n, ir))
            if is_lib(cob) and (ob, fn) != (cob, cfn):
                incl[(cob, cfn)] += ir
                calls[(cob, cfn)] += n
    memo = {}

    def drv_share(f, seen):
        if f in memo:
            return memo[f]
        if is_drv(f[0]):
            return 1.0
        if not is_lib(f[0]) or f in seen or not incl[f]:
            return 0.0
        seen = seen | {f}
        d = 0.0
        for callee, n, ir in out[f]:
            if callee != f:
                d += ir * drv_share(callee, seen)
        memo[f] = min(d / incl[f], 1.0)
        return memo[f]

    rows = []
    for f, ir in incl.items():
        rows.append((f[1], calls[f], ir, ir * drv_share(f, frozenset())))
    return sorted(rows, key=lambda r: -r[2])


def driver_launches(threads):
    return sum(v[0] for t in threads
               for (cob, cfn, ob, fn), v in t.calls.items()
               if is_drv(ob) and not is_drv(cob) and DRV_LAUNCH.match(fn))


def main():
    threads = [parse(p) for p in sys.argv[1:]]
    launching = [t for t in threads if t.launches()]
    others = [t for t in threads if not t.launches()]
    n = sum(t.launches() for t in launching)
    total = sum(sum(t.self_ir.values()) for t in threads)
    if not n:
        n = driver_launches(threads)
        if not n:
            sys.exit('cg-launch-cost.py: no launch in %s' % ' '.join(sys.argv[1:]))
        print('launches %d, without the library: whole process Ir per launch %.0f'
              % (n, total / n))
        return
    own, ext, drv = library_ir(launching)
    print('launches %d, whole process Ir per launch %.0f' % (n, total / n))
    print('launching threads: library Ir per launch %.0f (own code %.0f, libc and ld.so %.0f)'
          % ((own + ext) / n, own / n, ext / n))
    print('  driver calls per launch: %s' % ', '.join(
        '%s %.3f' % (k, v / n) for k, v in drv.most_common() if v / n >= 0.0005))
    o_own, o_ext, o_drv = library_ir(others)
    print('other threads (the idle thread): library Ir per launch %.0f' % ((o_own + o_ext) / n))
    print('  driver calls per launch: %s' % ', '.join(
        '%s %.3f' % (k, v / n) for k, v in o_drv.most_common() if v / n >= 0.0005))
    print('launching threads, by function: calls, inclusive Ir (of it in the driver) per launch')
    for fn, c, ir, d in by_function(launching):
        if ir / n < 1:
            continue
        print('  %-28s %7.3f %8.1f (%6.1f)' % (fn, c / n, ir / n, d / n))


main()
