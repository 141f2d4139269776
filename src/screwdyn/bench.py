"""Side-by-side benchmark: screwdyn against Pinocchio, in one run, on the same machine.

    python -m screwdyn.bench [--robots panda ur5 talos_full_v2] [--batch 1000 100000]
                             [--functions inverse_dynamics ...] [--markdown]
    screwdyn bench ...

For each robot (an example-robot-data robot name or a URDF file, :func:`screwdyn.models.resolve`;
the same file loaded by both libraries; ``NAME:floating`` with a free-flyer root joint in both,
``pin.JointModelFreeFlyer``) and function it times
one state from Python (median of interleaved rounds of loops, per call), and batches of states
(interleaved rounds too, each a loop of ``max(1, 10000 // B)`` calls of ``B`` states) against
Pinocchio's ``rneaInParallel`` / ``abaInParallel`` (same number of threads) or, where Pinocchio
has no parallel version, a Python loop over its single-state call. It also checks that both
libraries return the same numbers (max relative difference, joints matched by name).
Ratio = Pinocchio time / screwdyn time: above 1, screwdyn is faster.

Both libraries write into outputs made once: a screwdyn call gets ``out=``, as Pinocchio's
single calls write into its ``Data`` (and return a view of it), its ``*InParallel`` into the
``res`` they are given and its loop into its ``Data``. A fresh output is the allocator's and the
operating system's work, not the dynamics': ``np.empty((6, 6))`` costs about 0.2 us, and filling
a new 1.5 GB array of Talos mass matrices took 1.7-1.9 us a state on the project's machine
against 0.8-0.9 for one already touched. ``--fresh-outputs`` times screwdyn's calls with a new
array every call, as a call without ``out=`` makes.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

import numpy as np

import screwdyn

_FUNCS = [
    # screwdyn name, pinocchio single-state name, pinocchio parallel name (None: loop)
    ("inverse_dynamics", "rnea", "rneaInParallel"),
    ("mass_matrix", "crba", None),
    ("mass_matrix_inverse", "computeMinverse", None),
    ("forward_dynamics", "aba", "abaInParallel"),
    ("coriolis_matrix", "computeCoriolisMatrix", None),
    ("inverse_dynamics_derivatives", "computeRNEADerivatives", None),
    ("forward_dynamics_derivatives", "computeABADerivatives", None),
]
_DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")


def _paired(fa, fb, number, repeats, per_a=1, per_b=1):
    """Medians over ``repeats`` rounds, in microseconds per state (a call of ``fa`` does ``per_a``
    states, one of ``fb`` ``per_b``): each round times a
    loop of ``number`` calls of ``fa``, then of ``fb``. Interleaving puts both libraries under the
    same load (this kind of machine drifts by tens of per cent within seconds)."""
    fa()
    fb()
    ta, tb = [], []
    for _ in range(repeats):
        for f, times, per in ((fa, ta, per_a), (fb, tb, per_b)):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times.append((time.perf_counter() - t0) / (number * per) * 1e6)
    return statistics.median(ta), statistics.median(tb)


class _Robot:
    def __init__(self, name):
        import warnings

        import pinocchio as pin

        from . import models

        spec, _, kind = name.partition(":")
        if kind not in ("", "floating"):
            raise ValueError(f"robot {name!r}: the suffix after ':' can only be 'floating'")
        floating = kind == "floating"
        # example-robot-data first: its panda and ur5 are what Pinocchio's users load, not the
        # bundled robots of the same names
        source = models.resolve(spec, kinds=("example-robot-data", "urdf"))
        path = str(source.path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = models.load(source, floating_base=floating)
        self.name = name
        self.pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        self.pd = self.pm.createData()

    def random_q(self, rng, B=None):
        """Configurations: joint angles uniform in [-1, 1] (a free-flyer: position in [-1, 1] m, a
        uniform random rotation)."""
        shape = (self.model.nq,) if B is None else (B, self.model.nq)
        q = rng.uniform(-1, 1, shape)
        if self.model.nq != self.model.nv:
            q = screwdyn.random_configuration(self.model, rng, size=B)
        return q

    def q_to_pin(self, q):
        return screwdyn.to_pinocchio(self.model, q, None, pin_model=self.pm)[0]

    def to_pin(self, x):
        """A velocity-like vector (``qd``, ``qdd``, ``tau``) in Pinocchio's joint order and layout."""
        return screwdyn.to_pinocchio(self.model, None, x, pin_model=self.pm)[1]

    def from_pin(self, x, matrix=False):
        y = screwdyn.from_pinocchio(self.model, None, x, pin_model=self.pm)[1]
        if matrix:
            y = np.swapaxes(screwdyn.from_pinocchio(self.model, None, np.swapaxes(y, -1, -2), pin_model=self.pm)[1],
                            -1, -2)
        return y


def _pin_single(pin, r, fname, q, v, a):
    f = getattr(pin, fname)
    pm, pd = r.pm, r.pd
    if fname in ("rnea", "computeRNEADerivatives"):
        return lambda: f(pm, pd, q, v, a)
    if fname in ("aba", "computeABADerivatives"):
        return lambda: f(pm, pd, q, v, a)   # a plays tau
    if fname in ("crba", "computeMinverse"):
        return lambda: f(pm, pd, q)
    return lambda: f(pm, pd, q, v)


def _sd_single(name, m, q, v, a, out=None):
    """A call of screwdyn's ``name`` (its result in ``out`` when given; without, a call as short as a
    user writes it)."""
    f = getattr(screwdyn, name)
    if name in ("mass_matrix", "mass_matrix_inverse"):
        return (lambda: f(m, q)) if out is None else (lambda: f(m, q, out))
    if name == "coriolis_matrix":
        return (lambda: f(m, q, v)) if out is None else (lambda: f(m, q, v, out))
    return (lambda: f(m, q, v, a)) if out is None else (lambda: f(m, q, v, a, out=out))


def _output(name, n, B=None):
    """An output array of screwdyn's ``name`` for one state (``B`` None) or ``B``: ``(..., n, n)``
    matrices, ``(..., 3, n, n)`` for the derivatives (three matrices), or ``(..., n)`` vectors."""
    lead = () if B is None else (B,)
    if name in _DERIVATIVES:
        return np.empty(lead + (3, n, n))
    return np.empty(lead + ((n, n) if name in ("mass_matrix", "mass_matrix_inverse", "coriolis_matrix") else (n,)))


def _stacked(x):
    """A result as one array: the three matrices of the derivatives stacked ``(..., 3, n, n)``."""
    return np.stack(x, axis=-3) if isinstance(x, tuple) else x


def _pin_result(pin, r, pfname, q, v, a):
    """Pinocchio's answer at one state, in screwdyn's joint order (its ``crba`` and ``computeMinverse``
    fill the upper triangle)."""
    theirs = np.array(_pin_single(pin, r, pfname, r.q_to_pin(q), r.to_pin(v), r.to_pin(a))(), copy=True)
    if pfname in ("crba", "computeMinverse"):
        theirs = np.triu(theirs) + np.triu(theirs, 1).T
    if pfname == "computeRNEADerivatives":   # its dtau/da: the upper triangle of M
        theirs[2] = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
    return r.from_pin(theirs, matrix=theirs.ndim >= 2)


def _rel(ours, theirs):
    ours = _stacked(ours)
    return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))


def run(robots=("panda", "ur5", "talos_full_v2"), batches=(1000, 100000), repeats=41, threads=None, out=print,
        functions=None, fresh_outputs=False):
    import numba
    import pinocchio as pin

    if threads:
        numba.set_num_threads(threads)
    threads = numba.get_num_threads()
    rows = []
    rng = np.random.default_rng(0)
    for rname in robots:
        r = _Robot(rname)
        n = r.model.n
        pool = pin.ModelPool(r.pm, threads)
        for name, pfname, pparallel in _FUNCS:
            if functions is not None and name not in functions:
                continue
            q, v, a = r.random_q(rng), rng.normal(size=n), rng.normal(size=n)
            theirs = _pin_result(pin, r, pfname, q, v, a)
            err = _rel(_sd_single(name, r.model, q, v, a)(), theirs)   # a call as a user writes it
            qp, vp, ap = r.q_to_pin(q), r.to_pin(v), r.to_pin(a)
            number = max(100, 4000 // max(1, n))
            sd1 = _sd_single(name, r.model, q, v, a, None if fresh_outputs else _output(name, n))
            t_sd, t_pin = _paired(sd1, _pin_single(pin, r, pfname, qp, vp, ap), number, repeats)
            err = max(err, _rel(sd1(), theirs))   # the timed call's answer too
            rows.append((rname, name, 1, t_sd, t_pin, pfname, err))
            for B in batches:
                Q, V, A = r.random_q(rng, B), rng.normal(size=(B, n)), rng.normal(size=(B, n))
                sd = _sd_single(name, r.model, Q, V, A, None if fresh_outputs else _output(name, n, B))
                rounds = max(3, repeats // 4)
                calls = max(1, 10000 // B)   # a round times a loop of calls, as for one state (B = 1,000: ten)
                if pparallel is not None:
                    QP, VP, AP = (np.ascontiguousarray(X.T) for X in (r.q_to_pin(Q), r.to_pin(V), r.to_pin(A)))
                    res = np.empty((n, B))
                    f = getattr(pin, pparallel)
                    t_sd, t_pin = _paired(sd, lambda: f(threads, pool, QP, VP, AP, res), calls, rounds, B, B)
                    ref = r.from_pin(res.T)
                    err_b = _rel(sd(), ref)
                    label = f"{pparallel}({threads})"
                else:
                    Bl = min(B, 2000)   # a Python loop: time a slice, report per state
                    fs = [_pin_single(pin, r, pfname, r.q_to_pin(Q[k]), r.to_pin(V[k]), r.to_pin(A[k])) for k in range(Bl)]
                    t_sd, t_pin = _paired(sd, lambda: [f() for f in fs], calls, rounds, B, Bl)
                    ours = _stacked(sd())   # the batch's answers, checked at its first, middle and last states
                    err_b = max(_rel(ours[k], _pin_result(pin, r, pfname, Q[k], V[k], A[k])) for k in {0, B // 2, B - 1})
                    label = f"loop of {pfname}"
                rows.append((rname, name, B, t_sd, t_pin, label, err_b))
                sd = ours = None   # let this batch's output go before the next one is made (Talos at 10^6: 15.5 GB)
            for row in rows[-1 - len(batches):]:
                out(_format_row(row))
    return rows


def _format_row(row):
    rname, name, B, t_sd, t_pin, label, err = row
    return (f"{rname:22s} {name:18s} {B:>7d}  screwdyn {t_sd:9.3f} us  pinocchio {t_pin:9.3f} us  "
            f"ratio {t_pin / t_sd:6.2f}x  [{label}]  maxrel {err:.1e}")


def markdown(rows):
    lines = ["| robot | function | batch | screwdyn us/state | Pinocchio us/state | Pinocchio call | ratio (pin/screwdyn) | max rel diff |",
             "|---|---|---:|---:|---:|---|---:|---:|"]
    for rname, name, B, t_sd, t_pin, label, err in rows:
        lines.append(f"| {rname} | {name} | {B} | {t_sd:.3f} | {t_pin:.3f} | {label} | {t_pin / t_sd:.2f} | {err:.1e} |")
    return "\n".join(lines)


def machine():
    import numba

    try:
        import pinocchio as pin
        pv = pin.__version__
    except ImportError:  # pragma: no cover
        pv = "absent"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import os
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__} ({numba.get_num_threads()} threads), Pinocchio {pv}, screwdyn {screwdyn.__version__}")


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["rollouts"]:   # batched simulations against MuJoCo: screwdyn.bench_rollouts
        from .bench_rollouts import main as rollouts
        return rollouts(argv[1:])
    p = argparse.ArgumentParser(prog="screwdyn bench", description=__doc__.split("\n\n")[0],
                                epilog="screwdyn bench rollouts --help: batched simulations against MuJoCo")
    p.add_argument("--robots", nargs="+", default=["panda", "ur5", "talos_full_v2"],
                   help="example-robot-data robot names or URDF files (default: panda ur5 talos_full_v2)")
    p.add_argument("--batch", nargs="*", type=int, default=[1000, 100000], help="batch sizes (states)")
    p.add_argument("--repeats", type=int, default=41, help="rounds of single-state timing (batches: a quarter)")
    p.add_argument("--functions", nargs="+", choices=[f[0] for f in _FUNCS], default=None,
                   help="the functions to time (default: all)")
    p.add_argument("--threads", type=int, default=None, help="threads for both libraries (default: numba's)")
    p.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    p.add_argument("--fresh-outputs", action="store_true",
                   help="screwdyn's calls allocate their output each call (default: out=, made once)")
    args = p.parse_args(argv)
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("screwdyn bench needs Pinocchio: pip install pin example-robot-data", file=sys.stderr)
        return 2
    print(machine())
    print(time.strftime("%Y-%m-%d %H:%M %Z"))
    print("screwdyn outputs: " + ("a new array each call" if args.fresh_outputs else "out=, made once"))
    rows = run(args.robots, args.batch, args.repeats, args.threads, functions=args.functions,
               fresh_outputs=args.fresh_outputs)
    if args.markdown:
        print()
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
