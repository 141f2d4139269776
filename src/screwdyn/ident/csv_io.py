"""Measurement files: CSV with one row per sample and one column per joint and quantity.

The format (:data:`CSV_FORMAT`) is the one ``screwdyn identify`` reads; the same columns name the
data of Parquet logs and data frames (:mod:`.logs`, :func:`columns`).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model import Model

__all__ = ["CSV_FORMAT", "columns", "read_csv", "write_csv"]


CSV_FORMAT = """\
CSV format (comma-separated, one header row, one row per sample):
  t                  sample time [s] (uniform sampling when qd/qdd are absent)
  q_<joint>          position of each joint, for every joint of the model
  qd_<joint>         velocity (optional; all joints or none)
  qdd_<joint>        acceleration (optional; all joints or none; requires qd)
  tau_<joint>        measured torque/force, for every joint
  run                which run (experiment) a sample belongs to (optional): velocities and
                     accelerations are filtered within each run, never across two
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


def columns(header, model: Model, where="the data") -> dict:
    """The columns of :data:`CSV_FORMAT` among ``header`` (column names): a dict with ``"q"`` and
    ``"tau"`` (a list of names, one per joint), ``"qd"`` and ``"qdd"`` when present, ``"t"`` and
    ``"run"`` (a name) when present. ``where`` names the data in errors."""
    header = [str(h) for h in header]
    present = set(header)
    out = {key: key for key in ("t", "run") if key in present}
    for prefix in ("q", "qd", "qdd", "tau"):
        names = []
        for k, jn in enumerate(model.joint_names):
            names.append(next((c for c in (f"{prefix}_{jn}", f"{prefix}_{k}") if c in present), None))
        if all(c is not None for c in names):
            out[prefix] = names
        elif any(c is not None for c in names) or prefix in ("q", "tau"):
            missing = [jn for jn, c in zip(model.joint_names, names) if c is None]
            raise InputError(f"{where}: columns {prefix}_<joint> missing for joints {missing}\n{CSV_FORMAT}")
    if ("qd" in out) != ("qdd" in out):
        raise InputError(f"{where}: give both qd_* and qdd_* columns, or neither\n{CSV_FORMAT}")
    return out


def read_csv(path, model: Model) -> dict:
    """Read a data file (:data:`CSV_FORMAT`): a dict with ``t``, ``q``, ``tau`` and, when present,
    ``qd``, ``qdd`` and ``run``, each ``(N,)`` or ``(N, n)``."""
    with open(path) as f:
        header = [h.strip() for h in f.readline().strip().split(",")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if data.shape[1] != len(header):
        raise InputError(f"{path}: the header has {len(header)} columns, the data {data.shape[1]}")
    col = {h: k for k, h in enumerate(header)}
    return {key: data[:, [col[c] for c in names] if isinstance(names, list) else col[names]]
            for key, names in columns(header, model, path).items()}
