"""``compile``: numba kernels into numba's cache now, in parallel over the cores."""
from __future__ import annotations

import os
import sys


def cmd_compile(args):
    from ..algorithms import target
    if args.native and os.environ.get("SCREWDYN_CPU", "").lower() not in ("native", "host"):
        # the target is chosen at import: run again with it (the workers inherit it)
        os.environ["SCREWDYN_CPU"] = "native"
        os.execv(sys.executable, [sys.executable, "-m", "screwdyn", *sys.argv[1:]])
    from ..precompile import compile_ahead

    def report(name, seconds, done, total):
        if not args.quiet:
            print(f"screwdyn: [{done:2d}/{total}] {seconds:5.1f} s  {name}", flush=True)

    total = compile_ahead("install" if args.install_set else "all", jobs=args.jobs, report=report)
    print(f"screwdyn: {'the install set' if args.install_set else 'every kernel'} ready in {total:.1f} s "
          f"({target.compile_note()}; numba mode {target.MODE})")
    if args.native:
        print("screwdyn: compiled for this machine's CPU model: the processes that use this cache need "
              "SCREWDYN_CPU=native in their environment")
    return 0


def add_compile_command(add):
    """The parser of compile."""
    sp = add("compile", "compile every numba kernel into numba's cache now, in parallel over the cores (pip "
                        "install compiles the main ones; every other compiles on its first use): for a Docker "
                        "image, cluster workers, NUMBA_CACHE_DIR, a read-only install")
    sp.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: one per core)")
    sp.add_argument("--native", action="store_true",
                    help="for this machine's CPU model instead of the portable x86-64-v3 level (the processes "
                         "using the cache then need SCREWDYN_CPU=native)")
    sp.add_argument("--install-set", action="store_true", help="only what pip install compiles")
    sp.add_argument("--quiet", action="store_true", help="print only the total")
    sp.set_defaults(func=cmd_compile)
