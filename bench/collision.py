"""Collision detection per state: Solo12 standing on the ground, gymnasium's humanoid on its floor
(and with self-collision), one state and a batch, beside MuJoCo's mj_kinematics + mj_collision on
the humanoid; and each kernel's cold compile (an empty NUMBA_CACHE_DIR, in a fresh process).

    python bench/collision.py [--batch 1000] [--compile]

Times are the best of 7 rounds (one state: 2,000 calls a round; a batch: 5 calls), microseconds per
state. A batch runs on numba's threads (NUMBA_NUM_THREADS, all cores by default).
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import timeit
import warnings
from pathlib import Path

import numpy as np

import screwdyn as sd


def best(f, number, rounds=7):
    f()
    return min(timeit.repeat(f, number=number, repeat=rounds)) / number * 1e6


def solo12(feet_only=False):
    from screwdyn.io.urdf import example_robot_data_path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_urdf(example_robot_data_path("solo12"), floating_base=True)
    if feet_only:
        model = model.replace(collisions=[c for c in model.collisions if c.link.endswith("FOOT")])
    q = sd.neutral(model)
    for k, name in enumerate(model.joint_names[1:]):
        i = model.idx_qs[k + 1]
        if "HFE" in name:
            q[i] = 0.8 if name.startswith("F") else -0.8
        if "KFE" in name:
            q[i] = -1.6 if name.startswith("F") else 1.6
    q[2] = 0.5
    env = sd.Environment(sd.Ground())
    low = min(float((sd.frame_pose(model, q, c.link) @ c.origin @ np.c_[c.hull()[0], np.ones(len(c.hull()[0]))].T)[2]
                    .min()) for c in model.collisions)
    q[2] -= low + 2e-4                       # the feet 0.2 mm into the ground
    return model, q, env


def humanoid():
    import gymnasium
    path = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "humanoid.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_mjcf(path)
    import mujoco
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    d.qpos[2] = 1.2929733          # standing, the feet just in the floor
    q = sd.from_mujoco(model, d.qpos, d.qvel)[0]
    return model, q, m, d


def batch_of(q, B, rng, nq_free=7):
    Q = np.tile(q, (B, 1))
    Q[:, nq_free:] += rng.normal(size=(B, len(q) - nq_free)) * 0.01
    Q[:, :3] += rng.normal(size=(B, 3)) * 1e-4
    return Q


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--compile", action="store_true", help="also time each kernel's cold compile")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    for name, (model, q, env) in (("solo12 (17 hulls) on the ground", solo12()),
                                  ("solo12 (4 feet) on the ground", solo12(feet_only=True))):
        c = sd.detect(model, q, env)
        Q = batch_of(q, args.batch, rng)
        sd.detect(model, Q, env)
        rows.append((name, int(c.count), best(lambda: sd.detect(model, q, env), 2000),
                     best(lambda: sd.detect(model, Q, env), 5) / args.batch, None))
    model, q, m, d = humanoid()
    import mujoco

    def mj():
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)

    for name, self_collision in (("humanoid on its floor", False), ("humanoid, self-collision", True)):
        c = sd.detect(model, q, self_collision=self_collision)
        Q = batch_of(q, args.batch, rng)
        sd.detect(model, Q, self_collision=self_collision)
        mj()
        rows.append((name, int(c.count), best(lambda: sd.detect(model, q, self_collision=self_collision), 2000),
                     best(lambda: sd.detect(model, Q, self_collision=self_collision), 5) / args.batch,
                     best(mj, 2000) if self_collision else None))
    import numba
    print(f"| scene | contacts | one state [us] | batch of {args.batch}, per state [us] ({numba.get_num_threads()} "
          "threads) | MuJoCo mj_kinematics + mj_collision [us] |")
    print("|---|---|---|---|---|")
    for name, n, one, per, mjt in rows:
        print(f"| {name} | {n} | {one:.2f} | {per:.3f} | {'' if mjt is None else f'{mjt:.2f}'} |")
    if args.compile:
        print("\n| kernel | cold compile, CPU [s] | wall [s] |\n|---|---|---|")
        code = ("import sys, time; from screwdyn.collision import _KERNELS; k = _KERNELS[sys.argv[1]]; "
                "c, w = time.process_time(), time.time(); k.bind(sys.argv[2]); "
                "print(round(time.process_time() - c, 1), round(time.time() - w, 1))")
        for tier in ("ground", "general"):
            for which in ("one", "batch"):
                env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp())
                out = subprocess.run([sys.executable, "-c", code, tier, which], env=env, capture_output=True,
                                     text=True).stdout.split()
                print(f"| {tier} {which} | {out[0]} | {out[1]} |")


if __name__ == "__main__":
    sys.exit(main())
