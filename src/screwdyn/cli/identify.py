"""``screwdyn identify``: least-squares identification from a CSV file, or from log files read
with Dask (it parses its own arguments: :func:`ident_cli`)."""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .. import models
from .common import CLIError


def ident_cli(argv=None) -> int:
    """``screwdyn identify data.csv --model ur5 [options]``: identify base parameters from a CSV file,
    or from log files read lazily with Dask (``screwdyn identify 'logs/*.parquet' --model ur5
    [--scheduler tcp://host:8786]``: Parquet or CSV, one run per file, chunk by chunk).

    Prints the base parameters with their estimates, standard deviations and the model's own
    (URDF) values, the per-joint RMS residual and, with ``--physical``, a physically consistent
    estimate. ``--json`` saves the results, ``--plot`` a figure of measured against fitted torques.
    Returns the exit status (0 on success, 2 on bad input).
    """
    from ..ident import identify
    from ..ident.csv_io import CSV_FORMAT, read_csv
    from ..plot import plot_torques

    parser = argparse.ArgumentParser(prog="screwdyn identify",
                                     description="Identify the base parameters of MODEL from measured motion and "
                                                 "torques in a CSV file, or in log files read with Dask (least "
                                                 "squares, see screwdyn.ident).",
                                     epilog=CSV_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+",
                        help="a CSV file of measurements (format below), or log files: Parquet or CSV, paths or "
                             "patterns ('logs/*.parquet'), one run per file, read chunk by chunk with Dask")
    parser.add_argument("--model", required=True,
                        help="a bundled robot (screwdyn.models), an MJCF or URDF file, or an example-robot-data robot name")
    parser.add_argument("--armature", action="store_true", help="identify rotor inertias (armature)")
    parser.add_argument("--friction", action="store_true", help="identify viscous and Coulomb friction")
    parser.add_argument("--wls", action="store_true", help="weighted least squares (per-joint noise variance)")
    parser.add_argument("--window", type=int, default=None, help="Savitzky-Golay window [samples]")
    parser.add_argument("--min-speed", type=float, default=0.0,
                        help="leave out equations of joints slower than this (uncertain Coulomb sign)")
    parser.add_argument("--polyorder", type=int, default=4, help="Savitzky-Golay polynomial degree")
    parser.add_argument("--scheduler", default=None,
                        help="the Dask scheduler for log files: a distributed scheduler's address (tcp://host:8786), "
                             "or threads (default), processes, synchronous")
    parser.add_argument("--chunk", type=int, default=None, help="samples per Dask chunk of the log files")
    parser.add_argument("--physical", action="store_true", help="also compute a physically consistent estimate")
    parser.add_argument("--json", default=None, help="save the results to this JSON file")
    parser.add_argument("--plot", default=None, help="save measured vs fitted torques to this PNG")
    args = parser.parse_args(argv)
    lazy = (len(args.data) > 1 or args.scheduler is not None or args.chunk is not None
            or any(ch in args.data[0] for ch in "*?[") or not args.data[0].lower().endswith(".csv"))
    flags = dict(armature=args.armature, viscous=args.friction, coulomb=args.friction)
    options = dict(weights="joint" if args.wls else None, window=args.window, polyorder=args.polyorder,
                   min_speed=args.min_speed, **flags)
    try:
        model = models.load(args.model)
        if lazy:
            est, samples, runs = _identify_logs(model, args, options)
        else:
            d = read_csv(args.data[0], model)
            est = identify(model, d["q"], d.get("qd"), d.get("qdd"), d["tau"], t=d.get("t"), runs=d.get("run"),
                           **options)
            samples = est.q.shape[0]
    except (ValueError, KeyError, OSError, CLIError) as e:   # ScrewdynError is a ValueError; bad numbers in the CSV too
        print(f"screwdyn identify: error: {e}", file=sys.stderr)
        return 2
    print(f"{model!r}: {est.base.rank} base parameters from {samples} samples ({est.method.upper()}, "
          f"cond {est.cond:.3g})")
    print(est.table(reference=est.base.of_model(model)))
    print("RMS residual per joint: " + ", ".join(f"{j} {r:.4g}" for j, r in zip(model.joint_names, est.rms)))
    phys = None
    if args.physical:
        phys = est.physical()
        print(f"physically consistent estimate: residual cost x{phys.cost_ratio:.6g}, RMS per joint "
              + ", ".join(f"{r:.4g}" for r in phys.rms))
    if args.json:
        out = dict(model=model.name, method=est.method, names=list(est.base.names), beta=est.beta.tolist(),
                   std=est.std.tolist(), rms=est.rms.tolist(), joint_names=list(model.joint_names),
                   parameter_names=list(est.base.parameter_names), K=est.base.K.tolist())
        if phys is not None:
            out["physical_pi"] = phys.pi.tolist()
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if args.plot:
        t, tau, tau_fit = est.t, est.tau, est.tau_fit
        if lazy:   # the first samples of the first run: a figure of them all would not be read
            import dask
            k = min(tau.shape[0], _PLOT_SAMPLES)
            t, tau, tau_fit, runs = dask.compute(None if t is None else t[:k], tau[:k], tau_fit[:k], runs[:k])
            k = int(np.argmax(np.append(runs, np.nan) != runs[0]))
            t, tau, tau_fit = (None if t is None else t[:k]), tau[:k], tau_fit[:k]
        t = t if t is not None else np.arange(tau.shape[0], dtype=float)
        plot_torques(args.plot, model, t, tau, tau_fit, labels=("measured", "fitted"),
                     title=f"{model.name}: identification fit ({est.method.upper()})")
    return 0


_PLOT_SAMPLES = 20000


def _identify_logs(model, args, options):
    """Identification from log files read lazily (:func:`screwdyn.ident.logs.read_logs`), on the
    scheduler asked for, with Dask's progress bar. Returns the estimate, the number of samples and
    the run labels."""
    try:
        import dask
    except ImportError:
        raise CLIError("log files are read with Dask: pip install 'screwdyn[dask]'") from None
    from ..ident import identify
    from ..ident.logs import CHUNK, read_logs

    d = read_logs(args.data, model, chunk=args.chunk or CHUNK)
    with _scheduler(args.scheduler), dask.config.set({"screwdyn.progress": True}):
        est = identify(model, d["q"], d.get("qd"), d.get("qdd"), d["tau"], t=d.get("t"), runs=d["run"], **options)
    return est, d["q"].shape[0], d["run"]


def _scheduler(name):
    """A context in which Dask computes on the scheduler ``name`` (an address: a distributed client)."""
    import contextlib

    import dask
    if name is None:
        return contextlib.nullcontext()
    if "://" in name or ":" in name:
        try:
            from distributed import Client
        except ImportError:
            raise CLIError("--scheduler with an address needs dask.distributed: pip install 'screwdyn[dask]'") from None
        return Client(name)
    if name not in ("threads", "processes", "synchronous", "sync", "single-threaded"):
        raise CLIError(f"--scheduler must be an address (tcp://host:8786) or threads, processes, synchronous; "
                       f"got {name!r}")
    return dask.config.set(scheduler=name)
