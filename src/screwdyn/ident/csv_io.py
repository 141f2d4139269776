"""Measurement files: CSV with one row per sample and one column per joint and quantity.

The format (:data:`CSV_FORMAT`) is the one ``screwdyn identify`` reads.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model import Model

__all__ = ["CSV_FORMAT", "read_csv", "write_csv"]


CSV_FORMAT = """\
CSV format (comma-separated, one header row, one row per sample):
  t                  sample time [s] (uniform sampling when qd/qdd are absent)
  q_<joint>          position of each joint, for every joint of the model
  qd_<joint>         velocity (optional; all joints or none)
  qdd_<joint>        acceleration (optional; all joints or none; requires qd)
  tau_<joint>        measured torque/force, for every joint
<joint> is the joint's name as in the URDF (model.joint_names) or its index 0..n-1.
Other columns are ignored."""


def write_csv(path, model: Model, t, q, tau, qd=None, qdd=None) -> None:
    """Write data in the format :func:`read_csv` and ``screwdyn identify`` read (:data:`CSV_FORMAT`)."""
    cols, names = [np.asarray(t, dtype=float).reshape(-1, 1)], ["t"]
    for prefix, arr in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        if arr is None:
            continue
        cols.append(np.asarray(arr, dtype=float).reshape(-1, model.n))
        names += [f"{prefix}_{j}" for j in model.joint_names]
    np.savetxt(path, np.hstack(cols), delimiter=",", header=",".join(names), comments="", fmt="%.17g")


def read_csv(path, model: Model) -> dict:
    """Read a data file (:data:`CSV_FORMAT`): a dict with ``t``, ``q``, ``tau`` and, when present,
    ``qd``, ``qdd``, each ``(N,)`` or ``(N, n)``."""
    with open(path) as f:
        header = [h.strip() for h in f.readline().strip().split(",")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if data.shape[1] != len(header):
        raise InputError(f"{path}: the header has {len(header)} columns, the data {data.shape[1]}")
    col = {h: k for k, h in enumerate(header)}
    out = {}
    if "t" in col:
        out["t"] = data[:, col["t"]]
    for prefix in ("q", "qd", "qdd", "tau"):
        idx = []
        for k, jn in enumerate(model.joint_names):
            c = col.get(f"{prefix}_{jn}", col.get(f"{prefix}_{k}"))
            idx.append(c)
        present = [c is not None for c in idx]
        if all(present):
            out[prefix] = data[:, idx]
        elif any(present) or prefix in ("q", "tau"):
            missing = [jn for jn, c in zip(model.joint_names, idx) if c is None]
            raise InputError(f"{path}: columns {prefix}_<joint> missing for joints {missing}\n{CSV_FORMAT}")
    if ("qd" in out) != ("qdd" in out):
        raise InputError(f"{path}: give both qd_* and qdd_* columns, or neither\n{CSV_FORMAT}")
    return out
