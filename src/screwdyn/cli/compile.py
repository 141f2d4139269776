"""``compile``: every numba kernel into numba's cache now."""
from __future__ import annotations


def cmd_compile(args):
    from ..algorithms.internals import MODE, compile_note
    from ..dispatch import precompile

    def report(name, seconds):
        if not args.quiet:
            print(f"  {name:32s} {seconds:6.2f} s", flush=True)

    total = precompile(report)
    print(f"screwdyn: every kernel ready in {total:.1f} s ({compile_note()}; numba mode {MODE})")
    return 0


def add_compile_command(add):
    """The parser of compile."""
    sp = add("compile", "compile every numba kernel into numba's cache now (pip install does it for its own "
                        "cache; this is for another one: NUMBA_CACHE_DIR, a read-only install, a new CPU)")
    sp.add_argument("--quiet", action="store_true", help="print only the total")
    sp.set_defaults(func=cmd_compile)
