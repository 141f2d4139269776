"""Logs larger than memory: Parquet or CSV files read lazily as Dask arrays, one run per file.

The columns are those of :data:`~screwdyn.ident.csv_io.CSV_FORMAT` (``t``, ``q_<joint>``,
``qd_<joint>``, ``qdd_<joint>``, ``tau_<joint>``, ``run``). :func:`read_logs` returns what
:func:`~screwdyn.ident.read_csv` returns, as Dask arrays chunked along the samples, with a run label
per sample, so that velocities and accelerations are filtered within each file (and within each run
of a file's ``run`` column), never across two::

    d = read_logs("logs/*.parquet", model)
    est = identify(model, d["q"], d.get("qd"), d.get("qdd"), d["tau"], t=d.get("t"), runs=d["run"])

:func:`frame_data` takes the same columns from a pandas or Dask data frame (what
``identify(model, frame)`` does).
"""
from __future__ import annotations

import glob
import os

import numpy as np

from ..errors import InputError
from ..model import Model
from .csv_io import columns

__all__ = ["frame_data", "log_paths", "read_logs"]

CHUNK = 1 << 18   # samples per chunk (262144: 27 MB of a 6-joint arm's [q | tau | t])


def log_paths(paths) -> list:
    """The files of ``paths``: a path, a glob pattern (``"logs/*.parquet"``), or a list of them;
    patterns expanded in sorted order."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found = []
    for p in paths:
        p = os.fspath(p)
        matches = sorted(glob.glob(p)) if glob.has_magic(p) else [p]
        if not matches:
            raise InputError(f"no file matches {p!r}")
        found += matches
    for p in found:
        if not os.path.isfile(p):
            raise InputError(f"{p}: no such file")
    return found


def read_logs(paths, model: Model, *, chunk=CHUNK) -> dict:
    """Measurement logs as Dask arrays, lazily: a dict with ``q``, ``tau`` ``(N, n)``, ``run`` ``(N,)``
    and, when the files have them, ``t`` ``(N,)``, ``qd``, ``qdd`` ``(N, n)``: the files one after the
    other, in the order of ``paths`` (:func:`log_paths`).

    Parquet files (``.parquet``, ``.pq``) are read by row groups, a chunk being about ``chunk``
    samples of whole row groups, their lengths from the files' metadata (nothing read before the
    computation). CSV files are read in blocks (``dask.dataframe.read_csv``), their lengths counted
    first (one extra read of the files). ``run`` labels each sample's run: its file, and its file's
    ``run`` column where there is one (runs are then where the column changes within a file).
    """
    import dask.array as da

    files = log_paths(paths)
    parts, names = [], None
    for k, path in enumerate(files):
        if path.lower().endswith((".parquet", ".pq", ".parq")):
            part, cols = _parquet(path, model, k, len(files), chunk)
        else:
            part, cols = _csv(path, model, k, len(files), chunk)
        keys = {key: (len(v) if isinstance(v, list) else 0) for key, v in cols.items() if key != "run"}
        if names is None:
            names = keys
        elif keys.keys() != names.keys():
            raise InputError(f"{path}: the columns ({sorted(keys)}) differ from those of {files[0]} ({sorted(names)})")
        parts.append(part)
    data = da.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
    return _split(data, names)


def _order(cols):
    """The keys of :func:`~screwdyn.ident.csv_io.columns`, in the order the arrays are stacked (run last)."""
    return [key for key in ("t", "q", "qd", "qdd", "tau") if key in cols]


def _names(cols):
    out = []
    for key in _order(cols):
        out += cols[key] if isinstance(cols[key], list) else [cols[key]]
    return out


def _split(data, sizes):
    """The stacked columns ``[t | q | qd | qdd | tau | run]`` as a dict of arrays."""
    out, c = {}, 0
    for key in _order(sizes):
        width = sizes[key]
        out[key] = data[:, c] if width == 0 else data[:, c:c + width]
        c += max(width, 1)
    out["run"] = data[:, c]
    return out


def _label(run_column, k, files):
    """Run labels: the file ``k`` of ``files``, and the file's own ``run`` column (integers)."""
    return k + files * run_column


def _parquet(path, model, k, files, chunk):
    import dask
    import dask.array as da
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    cols = columns(meta.schema.names, model, path)
    groups, blocks, rows = [], [], 0
    for g in range(meta.num_row_groups):
        groups.append(g)
        rows += meta.row_group(g).num_rows
        if rows >= chunk or g == meta.num_row_groups - 1:
            read = dask.delayed(_read_parquet, pure=True)(path, tuple(groups), _names(cols), cols.get("run"), k, files)
            blocks.append(da.from_delayed(read, shape=(rows, len(_names(cols)) + 1), dtype=float))
            groups, rows = [], 0
    if not blocks:
        raise InputError(f"{path}: no samples")
    return (da.concatenate(blocks, axis=0) if len(blocks) > 1 else blocks[0]), cols


def _read_parquet(path, groups, names, run, k, files):
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read_row_groups(list(groups), columns=names + ([run] if run else []))
    out = np.empty((table.num_rows, len(names) + 1))
    for c, name in enumerate(names):
        out[:, c] = table.column(name).to_numpy()
    out[:, -1] = _label(table.column(run).to_numpy() if run else 0, k, files)
    return out


def _csv(path, model, k, files, chunk):
    import dask.dataframe as dd

    with open(path) as f:
        header = [h.strip() for h in f.readline().strip().split(",")]
    cols = columns(header, model, path)
    frame = dd.read_csv(path, usecols=_names(cols) + (["run"] if "run" in cols else []), dtype=float,
                        blocksize=max(chunk * len(header) * 20, 1 << 20))
    frame = frame.assign(run=_label(frame["run"] if "run" in cols else 0, k, files))
    return frame[_names(cols) + ["run"]].to_dask_array(lengths=True), cols


def frame_data(frame, model: Model):
    """``(q, qd, qdd, tau, t, runs)`` from a data frame (pandas or Dask) with the columns of
    :data:`~screwdyn.ident.csv_io.CSV_FORMAT` (None for those absent): NumPy arrays from pandas, Dask
    arrays from Dask (its partition lengths are counted first: one extra pass over the frame)."""
    from .._dask import is_dask

    cols = columns(list(frame.columns), model, "the data frame")
    names = _names(cols) + (["run"] if "run" in cols else [])
    if is_dask(frame):
        data = frame[names].astype(float).to_dask_array(lengths=True)
    else:
        data = frame[names].to_numpy(dtype=float)
    if "run" not in cols:
        data = np.concatenate([data, np.zeros((data.shape[0], 1))], axis=1) if not is_dask(frame) else \
            _with_column(data)
    d = _split(data, {key: (len(v) if isinstance(v, list) else 0) for key, v in cols.items()})
    return d["q"], d.get("qd"), d.get("qdd"), d["tau"], d.get("t"), (d["run"] if "run" in cols else None)


def _with_column(data):
    import dask.array as da
    return da.concatenate([data, da.zeros((data.shape[0], 1), chunks=(data.chunks[0], 1))], axis=1)
