"""The GPU check and benchmark, in one go (a few minutes on one GPU): run it on a machine with an
NVIDIA GPU and numba-cuda (``pip install -e ".[gpu,test]"``)::

    python bench/gpu.py            # checks, then timings; markdown for BENCHMARKS.md on stdout
    python bench/gpu.py --quick    # B = 2^18 and 2^20 only
    NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1 python bench/gpu.py --smoke   # the script itself, in
                                   # numba-cuda's simulator on tiny batches (no figure means anything)

1. Checks every GPU kernel against the CPU kernels on every bundled robot and on random trees
   (a few thousand random states; the rollouts on 64): FP64 to 1e-12 relative (to the largest
   entry), FP32 within screwdyn.gpu's stated 1e-5. Exits 1 if any fails, before timing.
2. Times the kernels alone (device arrays made beforehand, best of 5 launches, synchronised): inverse
   dynamics, forward dynamics (ABA), the mass matrix (CRBA), and rollouts (RK4, semi-implicit Euler)
   of 10 steps, in ns per state (per robot-step for rollouts), FP64 and FP32, at B = 2^18 .. 2^22;
   each kernel's compile time (first launch: NVVM, ptxas, load); the host-to-device copy of the
   states; and the call through the public function with CUDA device arrays against the CPU's
   (where the GPU starts to win: screwdyn.gpu.MIN_BATCH).

Targets (issue 41, H200): Panda ID <= 0.32 ns/state FP64 at 2^20; RK4 <= 6 ns per robot-step (Panda),
<= 70 (a 29-DoF humanoid).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import screwdyn                            # noqa: E402
from numba import cuda                     # noqa: E402
from screwdyn import gpu, models           # noqa: E402
from screwdyn.gpu import drivers           # noqa: E402

from helpers import random_model           # noqa: E402

FP32_BOUND = 1e-5
ROLLOUT_STEPS = 10


def rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def states(m, B, rng):
    q = screwdyn.random_configuration(m, rng=rng, size=(B,))
    return q, rng.normal(size=(B, m.n)), rng.normal(size=(B, m.n))


# ---------------------------------------------------------------------------------- checks
def check(name, m, rng, B=4096, k=64):
    rows = []
    q, qd, x = states(m, B, rng)
    F = rng.normal(size=(B, m.nbodies, 6))
    gpu.MIN_BATCH = 1
    cases = [("inverse_dynamics", lambda a: screwdyn.inverse_dynamics(m, *a), (q, qd, x)),
             ("gravity_torques", lambda a: screwdyn.gravity_torques(m, a[0]), (q,)),
             ("forward_dynamics", lambda a: screwdyn.forward_dynamics(m, *a), (q, qd, x)),
             ("mass_matrix", lambda a: screwdyn.mass_matrix(m, a[0]), (q,))]
    if m._one_dof:
        cases += [("inverse_dynamics f_ext", lambda a: screwdyn.inverse_dynamics(m, *a[:3], a[3]), (q, qd, x, F)),
                  ("forward_dynamics f_ext", lambda a: screwdyn.forward_dynamics(m, *a[:3], a[3]), (q, qd, x, F))]
    for what, f, args in cases:
        ref = f(args)
        y64 = f(tuple(cuda.to_device(a) for a in args)).copy_to_host()
        y32 = f(tuple(cuda.to_device(a.astype(np.float32)) for a in args)).copy_to_host()
        rows.append((name, what, rel(y64, ref), rel(y32, ref)))
    for method in ("rk4", "semi_implicit_euler"):
        q1, v1 = gpu.rollout(m, cuda.to_device(q[:k]), cuda.to_device(qd[:k]), cuda.to_device(x[:k]), 1e-3,
                             ROLLOUT_STEPS, method)
        q1, v1 = q1.copy_to_host(), v1.copy_to_host()
        tr = screwdyn.simulate(m, q[:k], qd[:k], duration=1e-3 * ROLLOUT_STEPS, dt=1e-3, tau=x[:k, None, :],
                               integrator=method, friction=False, joint_limits=False)
        q32, v32 = gpu.rollout(m, cuda.to_device(q[:k].astype(np.float32)), cuda.to_device(qd[:k].astype(np.float32)),
                               cuda.to_device(x[:k].astype(np.float32)), 1e-3, ROLLOUT_STEPS, method)
        rows.append((name, f"rollout {method} q", rel(q1, tr.q[:, -1]), rel(q32.copy_to_host(), tr.q[:, -1])))
        rows.append((name, f"rollout {method} v", rel(v1, tr.qd[:, -1]), rel(v32.copy_to_host(), tr.qd[:, -1])))
    return rows


# ---------------------------------------------------------------------------------- timings
def best(f, repeat=5):
    f()
    cuda.synchronize()
    t = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        cuda.synchronize()
        t = min(t, time.perf_counter() - t0)
    return t


def kernel_args(kind, m, B, dtype, rng):
    q, qd, x = (a.astype(dtype) for a in states(m, B, rng))
    d = [cuda.to_device(a) for a in (q, qd, x)]
    status = cuda.device_array(B, np.int64)
    fe = cuda.to_device(np.zeros((1, m.n, 6), dtype))
    if kind == "crba":
        return (d[0], cuda.device_array((B, m.n, m.n), dtype), status)
    if kind in ("rnea", "aba"):
        return (*d, fe, False, cuda.device_array((B, m.n), dtype), status)
    method = drivers.RK4 if kind == "rk4" else drivers.SEMI_IMPLICIT_EULER
    return (*d, 1e-3, ROLLOUT_STEPS, method, status)


def time_kernels(robots, sizes, rng):
    rows, compiles = [], []
    for name, m in robots.items():
        for dtype in (np.float64, np.float32):
            for kind in ("rnea", "aba", "crba", "rk4", "semi"):
                launch_kind = "step" if kind in ("rk4", "semi") else kind
                first = None
                for B in sizes:
                    if kind == "crba" and B * m.n * m.n * 8 > 8 << 30:
                        continue
                    args = kernel_args(kind, m, B, dtype, rng)
                    if first is None:
                        t0 = time.perf_counter()
                        drivers.launch(launch_kind, m, 32, tuple(a[:32] if hasattr(a, "copy_to_host") else a
                                                                  for a in args), dtype)
                        cuda.synchronize()
                        first = time.perf_counter() - t0
                        compiles.append((name, kind, np.dtype(dtype).name, first))
                    t = best(lambda: drivers.launch(launch_kind, m, B, args, dtype))
                    per = B * (ROLLOUT_STEPS if launch_kind == "step" else 1)
                    rows.append((name, kind, np.dtype(dtype).name, B, 1e9 * t / per))
                    del args
    return rows, compiles


def copy_cost(m, B, rng):
    q, qd, x = states(m, B, rng)
    t = best(lambda: [cuda.to_device(a) for a in (q, qd, x)])
    return 1e9 * t / B, (q.nbytes + qd.nbytes + x.nbytes) / t / 1e9


def crossover(m, rng, top=16):
    rows = []
    gpu.MIN_BATCH = 1
    for e in range(4, top + 1, 2):
        B = 1 << e
        q, qd, x = states(m, B, rng)
        dq, dqd, dx = (cuda.to_device(a) for a in (q, qd, x))
        t_gpu = best(lambda: screwdyn.inverse_dynamics(m, dq, dqd, dx))
        t_cpu = best(lambda: screwdyn.inverse_dynamics(m, q, qd, x))
        rows.append((B, 1e6 * t_gpu, 1e6 * t_cpu))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="B = 2^18 and 2^20 only")
    parser.add_argument("--smoke", action="store_true", help="tiny batches, two models (the simulator)")
    args = parser.parse_args()
    smoke = args.smoke
    rng = np.random.default_rng(41)
    dev = cuda.get_current_device()
    name = getattr(dev, "name", "numba-cuda's simulator")
    print(f"# screwdyn GPU: {name.decode() if isinstance(name, bytes) else name}, "
          f"compute capability {dev.compute_capability}\n")

    checked = {nm: models.load(nm) for nm in (("panda",) if smoke else models.names())}
    checked["talos_reduced floating"] = models.load("talos_reduced", floating_base=True)
    for k in range(1 if smoke else 3):
        checked[f"random tree {k}"] = random_model(rng, n=8 + 4 * k, fixed=2, branching=0.5, armature=True,
                                                   spherical=0.2 * k, floating=k == 2)
    rows, failed = [], 0
    for name, m in checked.items():
        rows += check(name, m, rng, *((4, 2) if smoke else ()))
    print("| model | function | FP64 rel. error | FP32 rel. error | |\n|---|---|---|---|---|")
    for name, what, e64, e32 in rows:
        ok = e64 < 1e-12 and e32 < FP32_BOUND
        failed += not ok
        print(f"| {name} | {what} | {e64:.1e} | {e32:.1e} | {'ok' if ok else 'FAIL'} |")
    print(f"\n{len(rows) - failed} checks passed, {failed} failed\n")
    if failed:
        sys.exit(1)

    sizes = [1 << 18, 1 << 20] if args.quick else [1 << e for e in range(18, 23)]
    robots = {"panda": models.load("panda"), "ur5": models.load("ur5"),
              "talos_reduced (floating)": models.load("talos_reduced", floating_base=True)}
    if smoke:
        sizes, robots = [64], {"panda": robots["panda"]}
    timings, compiles = time_kernels(robots, sizes, rng)
    print("ns per state (rollouts rk4/semi: per robot-step, 10 steps a launch), kernel alone\n")
    print("| model | kernel | dtype | " + " | ".join(f"B = 2^{int(math.log2(B))}" for B in sizes) + " |")
    print("|---|---|---|" + "---|" * len(sizes))
    for name in robots:
        for kind in ("rnea", "aba", "crba", "rk4", "semi"):
            for dt in ("float64", "float32"):
                got = {B: t for n, k, d, B, t in timings if (n, k, d) == (name, kind, dt)}
                print(f"| {name} | {kind} | {dt} | " + " | ".join(f"{got[B]:.3g}" if B in got else "-" for B in sizes)
                      + " |")
    print("\ncompile time of each kernel (first launch)\n\n| model | kernel | dtype | s |\n|---|---|---|---|")
    for name, kind, dt, t in compiles:
        print(f"| {name} | {kind} | {dt} | {t:.2f} |")
    B = 64 if smoke else 1 << 20
    ns, gbs = copy_cost(robots["panda"], B, rng)
    print(f"\nhost-to-device copy of (q, qd, qdd), Panda, B = {B}: {ns:.2f} ns per state ({gbs:.1f} GB/s)\n")
    print("inverse dynamics through the public function, Panda: GPU (CUDA device arrays) against CPU (NumPy)\n")
    print("| B | GPU us | CPU us |\n|---|---|---|")
    for B, tg, tc in crossover(robots["panda"], rng, 6 if smoke else 16):
        print(f"| {B} | {tg:.1f} | {tc:.1f} |")


if __name__ == "__main__":
    main()
