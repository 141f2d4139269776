"""Time per call against the number of bodies, for chains and branching trees of 1 to 256 bodies.

    python bench/scaling.py --plot docs/scaling.png

RNEA and ABA should grow linearly in n; CRBA at most quadratically (O(n d), d the depth: n^2 for a
chain, n log n for a balanced tree). Each point is the median of repeated single-state calls from
Python (call overhead included, which dominates for small n). Pinocchio is timed on the same
models when it is installed (its models are built from ours, joint for joint).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import screwdyn
from screwdyn.inertia import box
from screwdyn.spatial import exp_so3, transform

SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def make_model(n, kind, seed=0):
    """A chain (each body on the previous) or a binary tree (body i on body (i - 1) // 2)."""
    rng = np.random.default_rng(seed)
    b = screwdyn.ModelBuilder(f"{kind}{n}", gravity=(0, 0, -9.81))
    for i in range(n):
        parent = "base" if i == 0 else f"l{i - 1 if kind == 'chain' else (i - 1) // 2}"
        b.add_body(f"l{i}", parent, f"j{i}", "revolute" if rng.random() < 0.8 else "prismatic",
                   axis=rng.normal(size=3), origin=transform(exp_so3(rng.normal(size=3) * 0.5), [0, 0, 0.1]),
                   inertial=box(1.0, 0.1, 0.05, 0.1, com=[0, 0, 0.05]))
    return b.build()


def per_call(fn, repeats=15):
    number = 200
    for _ in range(number):   # warm up: the first loops of a process run slower (caches, branch predictors)
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def to_pinocchio(model):
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    for i in range(model.n):
        T = model.T_parent_body[i]
        axis = model.joint_axis[i].copy()
        jm = pin.JointModelRevoluteUnaligned(axis) if model.joint_type[i] == 0 else pin.JointModelPrismaticUnaligned(axis)
        jid = pm.addJoint(int(model.parent[i]) + 1, jm, pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()), model.joint_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(float(model.mass[i]), model.com[i].copy(), model.inertia_com[i].copy()),
                             pin.SE3.Identity())
    return pm


def run(sizes=SIZES, out=print):
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    rows = []
    for kind in ("chain", "tree"):
        for n in sizes:
            m = make_model(n, kind)
            rng = np.random.default_rng(1)
            q, qd, x = rng.uniform(-1, 1, n), rng.normal(size=n), rng.normal(size=n)
            row = {"kind": kind, "n": n,
                   "rnea": per_call(lambda: screwdyn.inverse_dynamics(m, q, qd, x)),
                   "aba": per_call(lambda: screwdyn.forward_dynamics(m, q, qd, x)),
                   "crba": per_call(lambda: screwdyn.mass_matrix(m, q))}
            if pin is not None:
                pm = to_pinocchio(m)
                pd = pm.createData()
                row["pin_rnea"] = per_call(lambda: pin.rnea(pm, pd, q, qd, x))
                row["pin_aba"] = per_call(lambda: pin.aba(pm, pd, q, qd, x))
                row["pin_crba"] = per_call(lambda: pin.crba(pm, pd, q))
            rows.append(row)
            out(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    return rows


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, kind in zip(axes, ("chain", "tree")):
        rs = [r for r in rows if r["kind"] == kind]
        n = np.array([r["n"] for r in rs])
        for key, color in (("rnea", "C0"), ("aba", "C1"), ("crba", "C2")):
            ax.loglog(n, [r[key] for r in rs], "o-", color=color, label=f"screwdyn {key}")
            if "pin_" + key in rs[0]:
                ax.loglog(n, [r["pin_" + key] for r in rs], "x--", color=color, alpha=0.6, label=f"Pinocchio {key}")
        ax.loglog(n, 0.05 * n, ":", color="gray", label="slope 1 (linear)")
        ax.loglog(n, 0.005 * n**2, "-.", color="gray", label="slope 2 (quadratic)")
        ax.set_title(f"{kind}s of n bodies" + (" (binary tree)" if kind == "tree" else ""))
        ax.set_xlabel("bodies n")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("time per call from Python [us]")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.suptitle("screwdyn: single-state time per call against model size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plot", default=None, help="write the figure here (PNG)")
    p.add_argument("--sizes", nargs="*", type=int, default=list(SIZES))
    args = p.parse_args(argv)
    rows = run(args.sizes)
    for kind in ("chain", "tree"):
        rs = [r for r in rows if r["kind"] == kind and r["n"] >= 16]
        if len(rs) >= 2:
            ln = np.log([r["n"] for r in rs])
            for key in ("rnea", "aba", "crba"):
                slope = np.polyfit(ln, np.log([r[key] for r in rs]), 1)[0]
                print(f"{kind}: fitted log-log slope of {key} for n >= 16: {slope:.2f}")
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
