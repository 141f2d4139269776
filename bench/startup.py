"""Start-up time: ``import screwdyn`` plus the first ``inverse_dynamics`` in a new process.

    python bench/startup.py [--runs 9]

Starts ``--runs`` fresh Python processes one after another, each timing its own import and first
call, and prints each and their median. The first run after an install (or an edit of the
kernels) compiles, and shows it: run it twice, and read the second for the warm cache.
"""
import argparse
import statistics
import subprocess
import sys
import time


def once():
    t0 = time.perf_counter()
    import numpy as np

    import screwdyn

    t1 = time.perf_counter()
    b = screwdyn.ModelBuilder("one_link")
    b.add_body("a", "base", "j1", "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3)
    model = b.build()
    t2 = time.perf_counter()
    screwdyn.inverse_dynamics(model, np.zeros(1), np.zeros(1), np.zeros(1))
    t3 = time.perf_counter()
    print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f} {t3 - t0:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.once:
        once()
        return
    totals = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, __file__, "--once"], capture_output=True, text=True, check=True)
        imp, model, first, total = (float(x) for x in out.stdout.split())
        totals.append(total)
        print(f"import {imp:.3f} s, model {model:.3f} s, first inverse_dynamics {first:.3f} s, total {total:.3f} s")
    print(f"median total over {len(totals)} processes: {statistics.median(totals):.3f} s "
          f"(min {min(totals):.3f}, max {max(totals):.3f})")


if __name__ == "__main__":
    main()
