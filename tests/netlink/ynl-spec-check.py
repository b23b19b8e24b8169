#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ynl-spec-check.py YNLDIR SPEC UAPI_INCLUDE_DIR CC_FLAGS...

Checks, as TAP, that Documentation/netlink/specs/gpusched.yaml is a valid
kernel netlink spec and says what the uAPI header says:

1. it validates against the kernel's schema (Documentation/netlink/
   genetlink.yaml of linux-source-6.12, extracted into YNLDIR);
2. the kernel's YNL library resolves it (ids of operations, attributes);
3. the uAPI header that the kernel's ynl-gen-c.py generates from it has
   the same enumerators and constants, with the same values, as
   kmod/uapi/linux/gpusched.h (compiled and compared, not text-diffed);
4. its range checks of the GPU knobs and client parameters are those of
   the one knob table (kmod/policy.c) that the module, the arbiter,
   gpuschedd and gpuschedctl use.
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml

n = 0
failed = False


def ok(cond, name, diag=''):
    global n, failed
    n += 1
    print(f"{'ok' if cond else 'not ok'} {n} - {name}")
    if not cond:
        failed = True
        for line in str(diag).splitlines():
            print(f"#   {line}")
    sys.stdout.flush()


def compile_and_run(src, flags, tmp, name):
    c = os.path.join(tmp, name + '.c')
    exe = os.path.join(tmp, name)
    with open(c, 'w') as f:
        f.write(src)
    cc = subprocess.run(['cc', '-std=gnu11', '-o', exe, c] + flags,
                        capture_output=True, text=True)
    if cc.returncode:
        return None, cc.stderr
    run = subprocess.run([exe], capture_output=True, text=True)
    return run.stdout, run.stderr


def main():
    ynl, spec_path, uapi_dir = sys.argv[1:4]
    extra = sys.argv[4:]
    print('1..4')
    schema_path = os.path.join(ynl, 'Documentation/netlink/genetlink.yaml')
    with open(spec_path) as f:
        spec = yaml.safe_load(f)

    # 1. The schema.
    try:
        import jsonschema
        with open(schema_path) as f:
            schema = yaml.safe_load(f)
        jsonschema.validate(spec, schema)
        ok(True, 'the spec validates against the kernel\'s genetlink.yaml schema')
    except Exception as e:  # noqa: BLE001 - any failure is the test's
        ok(False, 'the spec validates against the kernel\'s genetlink.yaml schema', e)

    # 2. The kernel's YNL library.
    sys.path.insert(0, os.path.join(ynl, 'tools/net/ynl'))
    try:
        from lib import SpecFamily
        fam = SpecFamily(spec_path, schema_path)
        ops = {k: v.req_value for k, v in fam.msgs.items()}
        ok(ops.get('get-gpu') == 1 and ops.get('ev-overrun') == 7 and
           'events' in fam.mcast_groups,
           'the kernel\'s YNL library resolves the spec', ops)
    except Exception as e:  # noqa: BLE001
        ok(False, 'the kernel\'s YNL library resolves the spec', e)

    with tempfile.TemporaryDirectory() as tmp:
        # 3. The generated uAPI against ours. The generator finds the
        # kernel tree from the spec's path, so the spec goes in YNLDIR.
        specs = os.path.join(ynl, 'Documentation/netlink/specs')
        os.makedirs(specs, exist_ok=True)
        inspec = os.path.join(specs, 'gpusched.yaml')
        with open(spec_path) as f, open(inspec, 'w') as g:
            g.write(f.read())
        gen = os.path.join(tmp, 'gen.h')
        r = subprocess.run([sys.executable, 'ynl-gen-c.py', '--mode', 'uapi',
                            '--header', '--spec', os.path.abspath(inspec),
                            '-o', gen],
                           cwd=os.path.join(ynl, 'tools/net/ynl'),
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            ok(False, 'the uAPI generated from the spec matches kmod/uapi/linux/gpusched.h',
               r.stdout + r.stderr)
        else:
            with open(gen) as f:
                text = f.read()
            names = sorted(set(re.findall(r'^\s*(_*GPUSCHED_[A-Z0-9_]+)\b', text, re.M) +
                               re.findall(r'^#define\s+(GPUSCHED_[A-Z0-9_]+)\s', text, re.M)))
            # The generator's names for what the header calls GENL_*.
            renames = {'GPUSCHED_FAMILY_NAME': 'GPUSCHED_GENL_NAME',
                       'GPUSCHED_FAMILY_VERSION': 'GPUSCHED_GENL_VERSION',
                       'GPUSCHED_MCGRP_EVENTS': 'GPUSCHED_GENL_MCGRP_EVENTS'}
            body = ''
            for nm in names:
                ours = renames.get(nm, nm)
                body += ('#ifdef OURS\n#define V_%s %s\n#else\n#define V_%s %s\n#endif\n'
                         % (nm, ours, nm, nm))
                body += ('\tprintf("%%s %%s\\n", "%s", _Generic((V_%s), char *: (char *)(V_%s), default: ""));\n'
                         '\tif (!_Generic((V_%s), char *: 1, default: 0)) printf("%%s %%lld\\n", "%s", (long long)_Generic((V_%s), char *: 0, default: (V_%s)));\n'
                         % (nm, nm, nm, nm, nm, nm, nm))
            src = '#include <stdio.h>\n#include HEADER\nint main(void)\n{\n' + body + '\treturn 0;\n}\n'
            a, ea = compile_and_run(src, ['-DHEADER="%s"' % gen], tmp, 'gen')
            ours_h = os.path.abspath(os.path.join(uapi_dir, 'linux/gpusched.h'))
            b, eb = compile_and_run(src, ['-DOURS', '-DHEADER="%s"' % ours_h],
                                    tmp, 'ours')
            if a is None or b is None:
                ok(False, 'the uAPI generated from the spec matches kmod/uapi/linux/gpusched.h',
                   (ea or '') + (eb or ''))
            else:
                diff = [f'{x!r} (spec) != {y!r} (header)'
                        for x, y in zip(a.splitlines(), b.splitlines()) if x != y]
                ok(not diff and a, 'the uAPI generated from the spec matches '
                   f'kmod/uapi/linux/gpusched.h ({len(names)} names)', '\n'.join(diff))

        # 4. Range checks of the spec against the knob table of kmod/policy.c.
        want = {}
        for s in spec['attribute-sets']:
            for a in s['attributes']:
                if 'checks' in a and a['type'] == 'u32':
                    c = a['checks']
                    consts = {d['name']: d['value'] for d in spec['definitions']
                              if d['type'] == 'const'}
                    lo = consts.get(c.get('min'), c.get('min', 0))
                    hi = consts.get(c.get('max'), c.get('max', 0xffffffff))
                    want[a['name'].replace('-', '_')] = (lo, hi)
        src = ('#include <stdio.h>\n#include "policy.h"\nint main(void)\n{\n'
               '\tfor (int k = 0; k < GS_POL_NR_KNOBS; k++)\n'
               '\t\tprintf("%s %u %u\\n", gs_pol_knobs[k].name, gs_pol_knobs[k].min,\n'
               '\t\t       gs_pol_knobs[k].max);\n'
               '\tprintf("weight %u %u\\n", GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX);\n'
               '\tprintf("cap_pct 0 100\\n");\n'
               '\treturn 0;\n}\n')
        out, err = compile_and_run(src, extra, tmp, 'knobs')
        if out is None:
            ok(False, 'the spec\'s range checks are the knob table\'s', err)
        else:
            bad = []
            for line in out.splitlines():
                name, lo, hi = line.split()
                if want.get(name) != (int(lo), int(hi)):
                    bad.append(f'{name}: spec {want.get(name)}, policy.c ({lo}, {hi})')
            ok(not bad, 'the spec\'s range checks are the knob table\'s (module and tools)',
               '\n'.join(bad))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
