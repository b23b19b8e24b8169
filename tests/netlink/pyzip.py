#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyzip.py YNLDIR OUT.zip

The part of Debian's Python standard library (and of python3-yaml) that
the kernel's YNL client tools/net/ynl/cli.py needs, as one zip file for
the test VM, where it is /usr/lib/python311.zip: the interpreter looks
there first, and imports pure-Python modules from a zip as from a
directory. The VM then needs only the interpreter, this zip and cli.py
with its lib/ -- about 1.5 MB instead of Python's 50 MB.

The module list is not written down but traced: cli.py runs here, on the
paths the VM tests take (help, a request that reaches the kernel, JSON
output), and every module it imported goes in, compiled (unchecked-hash
.pyc, so nothing is compiled again in the slow emulated VM) next to its
source (for readable tracebacks). Modules that the interpreter has built
in need nothing; C extensions in lib-dynload cannot load from a zip, and
none of those that cli.py imports is needed (each has a pure fallback),
which the VM test proves by running cli.py there.
"""
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
import tempfile
import zipfile

# Run in a child interpreter without site, with the paths the VM will
# have, so that the trace sees only what cli.py pulls in.
TRACER = r'''
import json, os, sys
ynl = sys.argv[1]
sys.path[:0] = [ynl]
sys.argv = ["cli.py"]
import runpy
def run(*args):
    sys.argv = ["cli.py"] + list(args)
    try:
        runpy.run_path(os.path.join(ynl, "cli.py"), run_name="__main__")
    except BaseException:
        pass
spec = sys.argv_spec
run("--help")
run("--spec", spec, "--no-schema", "--output-json", "--dump", "get-gpu")
run("--spec", spec, "--no-schema", "--do", "get-gpu", "--json", "{}")
# Imported lazily on paths the host cannot reach (errors, encodings of
# the VM's C locale, the unittest-free traceback printer).
for m in ("encodings.utf_8", "encodings.ascii", "encodings.latin_1",
          "encodings.aliases", "traceback", "linecache", "tokenize",
          "shutil", "textwrap", "json.encoder", "json.decoder", "pprint"):
    try:
        __import__(m)
    except ImportError:
        pass
out = []
for name, mod in sorted(sys.modules.items()):
    f = getattr(mod, "__file__", None)
    if f:
        out.append([name, f, hasattr(mod, "__path__")])
sys.__stdout__.write("\n@@MODULES@@" + json.dumps(out) + "\n")
'''


def main():
    ynl, out = sys.argv[1], sys.argv[2]
    spec = os.path.abspath(sys.argv[3])
    stdlib = os.path.dirname(os.__file__)
    dist = [p for p in sys.path if p.endswith('dist-packages')]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([stdlib] + dist),
               PYTHONDONTWRITEBYTECODE='1')
    code = TRACER.replace('sys.argv_spec', repr(spec))
    r = subprocess.run([sys.executable, '-S', '-c', code, ynl],
                       capture_output=True, text=True, env=env)
    marker = r.stdout.rfind('@@MODULES@@')
    if marker < 0:
        sys.exit(f'pyzip: tracing cli.py failed:\n{r.stdout}{r.stderr}')
    mods = json.loads(r.stdout[marker + len('@@MODULES@@'):])

    roots = [stdlib] + dist
    entries = {}
    for name, path, _ in mods:
        if not path.endswith('.py'):
            continue	# C extensions: see above
        path = os.path.realpath(path)
        for root in roots:
            root = os.path.realpath(root)
            if path.startswith(root + os.sep):
                entries[os.path.relpath(path, root)] = path
                break
        # Anything else is cli.py's own lib/, which the VM gets as files.
    with tempfile.TemporaryDirectory() as tmp, \
            zipfile.ZipFile(out + '.tmp', 'w', zipfile.ZIP_DEFLATED) as z:
        for arc, path in sorted(entries.items()):
            z.write(path, arc)
            pyc = os.path.join(tmp, 'x.pyc')
            py_compile.compile(path, cfile=pyc, dfile='/usr/lib/python311.zip/' + arc,
                               doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            z.write(pyc, arc + 'c')
    os.replace(out + '.tmp', out)
    print(f'pyzip: {len(entries)} modules, {os.path.getsize(out)} bytes in {out}')


if __name__ == '__main__':
    main()
