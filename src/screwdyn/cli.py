"""The ``screwdyn`` command line (also ``python -m screwdyn``).

::

    screwdyn info MODEL                          the tree, joints, masses, frames
    screwdyn inverse-dynamics MODEL --q .. --qd .. --qdd ..
    screwdyn forward-dynamics MODEL --q .. --qd .. --tau ..
    screwdyn mass-matrix MODEL --q ..
    screwdyn linearize MODEL --q .. [--qd ..] [--tau ..] [--dt 0.01]   A, B of d/dt dx = A dx + B dtau
    screwdyn simulate [MODEL] --duration 3 --dt 0.001 --integrator rk4 --plot out.png --animate out.gif [--view]
    screwdyn view MODEL [--q ..]                 the robot in a web browser (viser)
    screwdyn render MODEL [--q ..] -o robot.png  a picture without a display (--animate out.gif for a video)
    screwdyn derive MODEL                        closed-form M, C, g (SymPy)
    screwdyn identify DATA.csv --model MODEL     least-squares identification
    screwdyn identify 'logs/*.parquet' --model MODEL [--scheduler tcp://host:8786]   the same, from logs, with Dask
    screwdyn bench                               timings against Pinocchio

MODEL is a bundled robot (``screwdyn.models.names()``), a MuJoCo MJCF file, a URDF file, or an
example-robot-data robot name, tried in that order (:func:`screwdyn.models.resolve`). Vectors are numbers separated
by spaces or commas, ``pi`` allowed (``--q 0 -pi/4 0 -3pi/4 0 pi/2 pi/4``); a single number is
used for every joint.
Errors print one line on stderr and exit with status 2; ``--debug`` shows the traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings

import numpy as np

from . import models

__all__ = ["main", "parse_vector", "ident_cli"]

_VECTOR_OPTS = ("--q", "--qd", "--qdd", "--tau", "--q0", "--qd0", "--target", "--kp", "--kd", "--gravity")
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TOKEN = re.compile(rf"^([+-]?)(?:({_NUM})|({_NUM})?\*?pi(?:/({_NUM}))?)$")
_VECTOR_ARG = re.compile(rf"^[+-]?(?:{_NUM}|(?:{_NUM})?\*?pi(?:/{_NUM})?)(?:,[+-]?(?:{_NUM}|(?:{_NUM})?\*?pi(?:/{_NUM})?))*,?$")


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


# ---------------------------------------------------------------------------- helpers
def parse_vector(text, n=None, name="vector") -> np.ndarray:
    """Numbers separated by commas or spaces; ``pi``, ``-pi/2``, ``3pi/4``, ``0.5*pi`` allowed.
    With ``n``, a single number is repeated ``n`` times and any other length is an error."""
    tokens = [tok for tok in re.split(r"[,\s]+", str(text).strip()) if tok]
    vals = []
    for tok in tokens:
        m = _TOKEN.match(tok.lower())
        if not m:
            raise CLIError(f"{name}: {tok!r} is not a number (use e.g. 0.5, -1e-3, pi/2, -3pi/4)")
        sign = -1.0 if m.group(1) == "-" else 1.0
        if m.group(2) is not None:
            v = float(m.group(2))
        else:
            v = (float(m.group(3)) if m.group(3) else 1.0) * math.pi / (float(m.group(4)) if m.group(4) else 1.0)
        vals.append(sign * v)
    if not vals:
        raise CLIError(f"{name}: no numbers given")
    x = np.array(vals)
    if n is not None:
        if len(x) == 1:
            x = np.full(n, x[0])
        elif len(x) != n:
            raise CLIError(f"{name}: expected {n} numbers (one per joint) or one for all, got {len(x)}")
    if not np.all(np.isfinite(x)):
        raise CLIError(f"{name}: numbers must be finite")
    return x


def _join_vectors(argv):
    """Rewrite ``--q 0 -0.5 pi/2`` as ``--q=0,-0.5,pi/2`` so that negative entries are not
    taken for options by argparse."""
    out, i = [], 0
    while i < len(argv):
        tok = argv[i]
        if tok in _VECTOR_OPTS:
            vals = []
            j = i + 1
            while j < len(argv) and _VECTOR_ARG.match(argv[j].lower()):
                vals.append(argv[j].rstrip(","))
                j += 1
            if vals:
                out.append(f"{tok}={','.join(vals)}")
                i = j
                continue
        out.append(tok)
        i += 1
    return out


def _fmt(x, prec=6):
    return np.array2string(np.asarray(x), precision=prec, suppress_small=True, max_line_width=100,
                           floatmode="maxprec")


def _print_json(obj):
    print(json.dumps(obj, indent=1))


def _state(args, model, names=("q", "qd", "qdd")):
    """The state vectors of the options ``--q`` (default: the neutral configuration), ``--qd``, ...
    (default zeros)."""
    from .configuration import neutral

    out = []
    for nm in names:
        val = getattr(args, nm)
        size = model.nq if nm == "q" else model.n
        if val is None:
            out.append(neutral(model) if nm == "q" else np.zeros(size))
        else:
            out.append(parse_vector(val, size, f"--{nm}"))
    return out


def _load(args, spec=None):
    """The model of the command's MODEL argument (or ``spec``), floating with ``--floating-base``."""
    return models.load(args.model if spec is None else spec, floating_base=getattr(args, "floating_base", False))


_TYPE_NAMES = ("revolute", "prismatic", "free_flyer", "spherical")


# ---------------------------------------------------------------------------- commands
def cmd_info(args):
    model = _load(args)
    if args.json:
        _print_json(dict(
            name=model.name, dof=model.n, nq=model.nq, nv=model.nv, total_mass=model.total_mass,
            gravity=model.gravity.tolist(), base=model.base_name,
            joints=[dict(name=model.joint_names[i], type=_TYPE_NAMES[model.joint_type[i]],
                         link=model.link_names[i], nq=int(model.nqs[i]), nv=int(model.nvs[i]),
                         parent=model.base_name if model.parent[i] < 0 else model.link_names[model.parent[i]],
                         axis=model.joint_axis[i].tolist(), mass=float(model.mass[i]), com=model.com[i].tolist(),
                         lower=[_num(x) for x in model.q_lower[qs]], upper=[_num(x) for x in model.q_upper[qs]],
                         damping=model.damping[vs].tolist(), friction=model.friction[vs].tolist(),
                         armature=model.armature[vs].tolist()) if model.nvs[i] > 1 else
                    dict(name=model.joint_names[i], type=_TYPE_NAMES[model.joint_type[i]],
                         link=model.link_names[i], nq=1, nv=1,
                         parent=model.base_name if model.parent[i] < 0 else model.link_names[model.parent[i]],
                         axis=model.joint_axis[i].tolist(), mass=float(model.mass[i]), com=model.com[i].tolist(),
                         lower=_num(model.q_lower[qs][0]), upper=_num(model.q_upper[qs][0]),
                         damping=float(model.damping[vs][0]), friction=float(model.friction[vs][0]),
                         armature=float(model.armature[vs][0]))
                    for i, qs, vs in _blocks(model)],
            frames=list(model.frame_names)))
        return 0
    kinds = "".join("RPFS"[t] for t in model.joint_type)
    sizes = "" if model.nq == model.nv else f", nq = {model.nq}"
    print(f"{model.name}: {model.n} degrees of freedom{sizes} ({kinds}), total moving mass {model.total_mass:.6g} kg")
    print(f"gravity {_fmt(model.gravity, 4)} m/s^2, base link {model.base_name!r}")
    print()
    print("tree:")
    children = {-1: []}
    for i in range(model.nbodies):
        children.setdefault(i, [])
        children[int(model.parent[i])].append(i)

    def walk(i, prefix, last):
        conn = "`-- " if last else "|-- "
        jt = _TYPE_NAMES[model.joint_type[i]]
        print(f"{prefix}{conn}{model.link_names[i]}  ({model.joint_names[i]}, {jt})")
        kids = children[i]
        for k, c in enumerate(kids):
            walk(c, prefix + ("    " if last else "|   "), k == len(kids) - 1)

    print(model.base_name)
    for k, c in enumerate(children[-1]):
        walk(c, "", k == len(children[-1]) - 1)
    print()
    head = f"{'#':>2}  {'joint':<22} {'type':<9} {'axis':<17} {'mass [kg]':>10} {'lower':>9} {'upper':>9} " \
           f"{'damping':>8} {'friction':>8} {'armature':>8}"
    print(head)
    print("-" * len(head))
    for i, qs, vs in _blocks(model):
        jt = _TYPE_NAMES[model.joint_type[i]]
        axis = "(" + ", ".join(f"{a:.3g}" for a in model.joint_axis[i]) + ")" if model.nvs[i] == 1 else "-"
        lo, hi = (model.q_lower[qs][0], model.q_upper[qs][0]) if model.nvs[i] == 1 else (-np.inf, np.inf)
        print(f"{i:>2}  {model.joint_names[i]:<22} {jt:<9} {axis:<17} {model.mass[i]:>10.5g} "
              f"{lo:>9.4g} {hi:>9.4g} {model.damping[vs][0]:>8.4g} "
              f"{model.friction[vs][0]:>8.4g} {model.armature[vs][0]:>8.4g}")
    print()
    print(f"frames ({len(model.frame_names)}): " + ", ".join(model.frame_names))
    return 0


def _blocks(model):
    """``(joint, q slice, v slice)`` of each joint."""
    return [(i, slice(model.idx_qs[i], model.idx_qs[i] + model.nqs[i]),
             slice(model.idx_vs[i], model.idx_vs[i] + model.nvs[i])) for i in range(model.nbodies)]


def _num(x):
    return float(x) if np.isfinite(x) else None


def cmd_inverse_dynamics(args):
    import screwdyn
    model = _load(args)
    q, qd, qdd = _state(args, model)
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=args.friction)
    if args.json:
        _print_json(dict(joint_names=list(model.v_names), tau=tau.tolist()))
    else:
        print(f"tau = M(q) qdd + C(q, qd) qd + g(q){' + friction' if args.friction else ''}  [N m, N]")
        _print_named(model, tau)
    return 0


def cmd_forward_dynamics(args):
    import screwdyn
    model = _load(args)
    q, qd, tau = _state(args, model, ("q", "qd", "tau"))
    qdd = screwdyn.forward_dynamics(model, q, qd, tau, friction=args.friction, method=args.method)
    if args.json:
        _print_json(dict(joint_names=list(model.v_names), qdd=qdd.tolist()))
    else:
        print(f"qdd = M(q)^-1 (tau - C(q, qd) qd - g(q){' - friction' if args.friction else ''})  "
              f"[rad/s^2, m/s^2] ({args.method.upper()})")
        _print_named(model, qdd)
    return 0


def cmd_mass_matrix(args):
    import screwdyn
    model = _load(args)
    (q,) = _state(args, model, ("q",))
    M = screwdyn.mass_matrix(model, q)
    if args.json:
        _print_json(dict(joint_names=list(model.v_names), M=M.tolist()))
    else:
        print(f"M(q) ({model.n} x {model.n}, joints in the order {', '.join(model.joint_names)}):")
        with np.printoptions(precision=6, suppress=True, linewidth=150):
            print(M)
    return 0


def cmd_linearize(args):
    import screwdyn
    model = models.load(args.model)
    q, qd = _state(args, model, ("q", "qd"))
    tau = None if args.tau is None else parse_vector(args.tau, model.n, "--tau")
    A, B = screwdyn.linearize(model, q, qd, tau, dt=args.dt, friction=args.friction, scheme=args.scheme)
    if args.json:
        _print_json(dict(joint_names=list(model.joint_names), dt=args.dt, scheme=args.scheme if args.dt else None,
                         A=A.tolist(), B=B.tolist()))
        return 0
    n = model.n
    about = "tau = inverse_dynamics(q, qd, 0), which holds the state" if tau is None else "the given tau"
    if args.dt is None:
        print(f"d/dt dx = A dx + B dtau for x = (q, qd), linearized about {about}")
    else:
        print(f"dx[k+1] = A dx[k] + B dtau[k] for x = (q, qd), one {args.scheme} step of {args.dt:g} s, about {about}")
    print(f"state x = (q, qd): {2 * n} entries, joints in the order {', '.join(model.joint_names)}")
    with np.printoptions(precision=6, suppress=True, linewidth=150):
        print(f"A ({2 * n} x {2 * n}):")
        print(A)
        print(f"B ({2 * n} x {n}):")
        print(B)
    if args.dt is None:
        eig = np.linalg.eigvals(A)
        print(f"largest real part of an eigenvalue of A: {eig.real.max():.6g} 1/s"
              f" ({'unstable' if eig.real.max() > 1e-9 else 'not unstable'} about this state)")
    return 0


def _print_named(model, x):
    names = model.v_names
    w = max(len(j) for j in names)
    for jn, v in zip(names, x):
        print(f"  {jn:<{w}}  {v: .10g}")


def _default_target(model, q0):
    """``q0`` moved by +0.5, -0.46, +0.42, ... rad (0.1 m for a prismatic joint), within the limits:
    every joint moves, each by its own amount."""
    i = np.arange(model.n)
    step = np.where(model.joint_type == 0, 0.5, 0.1) * (-1.0) ** i * (1 - 0.08 * i)
    return np.clip(q0 + step, model.q_lower, model.q_upper)


def _home(model, spec):
    """The bundled robot's home configuration for ``model``: as given, or, for the robot loaded with
    ``--floating-base``, its joint angles at the neutral base pose."""
    q = models.home(spec)
    if len(q) == model.nq:
        return q
    one = model.nqs == 1
    if len(q) != np.count_nonzero(one):
        raise CLIError(f"{spec}: its home configuration has {len(q)} entries, the model {model.nq}; give --q0")
    from .configuration import neutral

    out = neutral(model)
    out[model.idx_qs[one]] = q
    return out


def _into_limits(model, q0):
    """``q0`` with each revolute joint outside its limits turned by whole turns into them where
    that fits (Corke's Puma 'qn' has q3 = pi, its range [-225, 45] deg): the same pose. (A
    free-flyer's or spherical joint's entries are left as they are.)"""
    q0 = np.array(q0, dtype=float)
    revolute = model.joint_type == 0
    idx = model.idx_qs[revolute]
    x, lo, hi = q0[idx], model.q_lower[idx], model.q_upper[idx]
    turns = np.ceil((lo - x) / (2 * np.pi))
    moved = x + 2 * np.pi * np.where(np.isfinite(turns), turns, 0.0)
    q0[idx] = np.where(((x < lo) | (x > hi)) & (moved <= hi), moved, x)
    return q0


def cmd_simulate(args):
    import screwdyn
    from . import control, plot, sim
    from .trajectory import JointTrajectory

    spec = args.model or "panda"
    model = _load(args, spec)
    if args.gravity is not None:
        model = model.with_gravity(parse_vector(args.gravity, 3, "--gravity"))
    if args.q0 is not None:
        q0 = parse_vector(args.q0, model.nq, "--q0")
    elif spec in models.names():
        q0 = _into_limits(model, _home(model, spec))
    else:   # mid-range where a joint has limits; else its neutral value (zero, an identity quaternion)
        q0 = np.where(np.isfinite(model.q_lower) & np.isfinite(model.q_upper),
                      0.5 * (np.nan_to_num(model.q_lower) + np.nan_to_num(model.q_upper)), screwdyn.neutral(model))
    qd0 = np.zeros(model.n) if args.qd0 is None else parse_vector(args.qd0, model.n, "--qd0")
    friction = not args.no_friction
    if args.tau is not None and args.controller not in (None, "none"):
        raise CLIError("give either --tau or --controller, not both")
    floating = model.nq != model.nv
    if floating and args.controller not in (None, "none"):
        raise CLIError(f"--controller {args.controller}: the controllers drive every degree of freedom, and "
                       f"{model.name}'s free-flyer or spherical joints have no actuator; without contacts a "
                       "floating robot falls freely: simulate it passive (the default here) or give --tau")
    controller = args.controller or ("none" if args.tau is not None or floating else "computed-torque")
    what = "passive (tau = 0)"
    tau = reference = None
    if args.tau is not None:
        tau = parse_vector(args.tau, model.n, "--tau")
        what = f"constant tau = {_fmt(tau, 4)}"
    elif controller != "none":
        target = _default_target(model, q0) if args.target is None else parse_vector(args.target, model.n, "--target")
        kp = parse_vector(args.kp, model.n, "--kp")
        kd = parse_vector(args.kd, model.n, "--kd")
        if controller == "gravity":
            tau = control.gravity_compensation(model, friction=friction)
            what = "gravity compensation tau = g(q)"
        elif controller == "pd":
            Mdiag = np.diag(screwdyn.mass_matrix(model, q0))
            tau = control.gravity_compensation_pd(model, target, kp * Mdiag, kd * Mdiag, friction=friction)
            what = f"PD + gravity compensation to q = {_fmt(target, 4)}"
        else:
            move = args.move_time if args.move_time is not None else 0.8 * args.duration
            ref = reference = JointTrajectory(q0, target, move, "quintic")
            tau = control.computed_torque_pd(model, ref, kp, kd, friction=friction)
            what = f"computed torque along a quintic to q = {_fmt(target, 4)} in {move:g} s"
    steps = math.ceil(args.duration / args.dt) if args.dt > 0 else 0
    progress = args.progress or (not args.quiet and sys.stderr.isatty() and steps * model.n > 20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sim.LimitWarning)   # said below, one line each
        traj = sim.simulate(model, q0, qd0, args.duration, args.dt, tau=tau, integrator=args.integrator,
                            friction=friction, joint_limits=not args.no_limits, saturate=args.saturate,
                            progress=progress)
    if not args.quiet:
        E = traj.total_energy
        dofs = f"{model.n} joints" if model.nq == model.nv else f"{model.n} degrees of freedom ({model.nbodies} joints)"
        print(f"{model.name}: {dofs}, {traj.t[-1]:g} s with {traj.integrator} "
              f"(dt = {args.dt:g} s, {len(traj)} samples), friction {'on' if friction else 'off'}, "
              f"joint limits {'off' if args.no_limits else 'on'}")
        print(f"  {what}")
        print(f"  wall time {traj.info['wall_time']:.3g} s ({traj.info['nfev']} dynamics evaluations)")
        print(f"  energy: start {E[0]:.6g} J, end {E[-1]:.6g} J (change {E[-1] - E[0]:+.4g} J)")
        print(f"  final q = {_fmt(traj.q[-1], 4)}")
        beyond = max(0.0, float(np.max(np.maximum(traj.q - model.q_upper, model.q_lower - traj.q))))
        print(f"  furthest beyond a position limit: {beyond:.3g} (rad or m)")
        for line in traj.limit_report():
            if " position " not in line or args.no_limits:
                print(f"  limit exceeded: {line}")
    written = []
    if args.csv:
        traj.to_csv(args.csv)
        written.append(args.csv)
    if args.npz:
        traj.to_npz(args.npz)
        written.append(args.npz)
    if args.plot:
        plot.plot_trajectory(traj, args.plot, reference=reference)
        written.append(args.plot)
    if args.animate:
        from .viz import animate
        animate(model, traj, args.animate, fps=args.fps)
        written.append(args.animate)
    if not args.quiet:
        for w in written:
            print(f"wrote {w}")
    if args.view:
        _serve(model, traj, args)
    return 0


def _serve(model, what, args):
    """Serve the browser viewer of ``what`` (q or a trajectory) until Ctrl+C."""
    from .viz import view

    viewer = view(model, what, host=args.host, port=args.port, geometry=args.geometry,
                  frames=getattr(args, "frames", False))
    print(f"screwdyn: viewer at {viewer.url} (Ctrl+C to stop)"
          + (f"; from another machine: ssh -L {viewer.port}:localhost:{viewer.port} <this host>, "
             f"then open http://localhost:{viewer.port}" if args.host in ("127.0.0.1", "localhost") else ""),
          flush=True)
    try:
        viewer.wait()
    except KeyboardInterrupt:   # the way to stop it: not an error
        print("screwdyn: viewer stopped", file=sys.stderr)


def _view_options(sp):
    sp.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: the network)")
    sp.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if taken)")


def _geometry_option(sp):
    sp.add_argument("--geometry", default="auto", choices=("auto", "visual", "skeleton"),
                    help="the URDF's visual meshes, a stick figure with volume, or auto (meshes when "
                         "there are any; default)")


def _trajectory_file(path, model):
    """A trajectory saved by 'screwdyn simulate --npz/--csv' (or Trajectory.to_npz / to_csv)."""
    from .sim import Trajectory

    if str(path).lower().endswith(".npz"):
        traj = Trajectory.from_npz(path)
        t, Q = traj.t, traj.q
    else:
        data = np.genfromtxt(path, delimiter=",", names=True, deletechars="")
        cols = [f"q_{name}" for name in model.q_names]
        missing = [c for c in ["t"] + cols if c not in data.dtype.names]
        if missing:
            raise CLIError(f"{path}: no columns {missing} (a CSV of 'screwdyn simulate --csv' for this model)")
        t, Q = data["t"], np.column_stack([data[c] for c in cols])
    if Q.shape[1] != model.nq:
        raise CLIError(f"{path}: the trajectory has {Q.shape[1]} coordinates, {model.name} has {model.nq}")
    return np.asarray(t, dtype=float), np.asarray(Q, dtype=float)


def _view_q(args, model):
    """``--q``; by default a bundled robot's home pose (None: the viewer's zero configuration)."""
    if args.q is not None:
        return parse_vector(args.q, model.nq, "--q")
    if args.model in models.names():
        q = models.home(args.model)
        if q.shape == (model.nq,):
            return q
    return None


def cmd_view(args):
    model = _load(args)
    what = _trajectory_file(args.trajectory, model) if args.trajectory else _view_q(args, model)
    _serve(model, what, args)
    return 0


def cmd_render(args):
    from .viz import animate, render

    model = _load(args)
    camera = {k: getattr(args, k) for k in ("azimuth", "elevation", "distance", "fov") if getattr(args, k) is not None}
    opts = {"camera": camera, "width": args.width, "height": args.height, "geometry": args.geometry,
            "frames": args.frames, "com": args.com, "floor": not args.no_floor}
    if args.animate:
        if not args.trajectory:
            raise CLIError("--animate needs --trajectory FILE (.npz or .csv from 'screwdyn simulate'); "
                           "or run 'screwdyn simulate MODEL --animate OUT'")
        count = animate(model, _trajectory_file(args.trajectory, model), args.animate, fps=args.fps, **opts)
        print(f"wrote {args.animate} ({count} frames)")
        return 0
    if args.trajectory:
        raise CLIError("--trajectory goes with --animate OUT.gif/.mp4")
    render(model, _view_q(args, model), args.output, **opts)
    print(f"wrote {args.output}")
    return 0


def cmd_derive(args):
    model = models.load(args.model)
    try:
        from .symbolic import derive_text
    except ImportError as e:
        raise CLIError(f"symbolic derivation is not available: {e}") from None
    if model.n > 4 and not args.cse:
        print(f"screwdyn: note: {model.n} joints: the closed form is long; --cse shortens it", file=sys.stderr)
    print(derive_text(model, latex=args.latex, simplify=args.simplify, cse=args.cse), end="")
    return 0


def ident_cli(argv=None) -> int:
    """``screwdyn identify data.csv --model ur5 [options]``: identify base parameters from a CSV file,
    or from log files read lazily with Dask (``screwdyn identify 'logs/*.parquet' --model ur5
    [--scheduler tcp://host:8786]``: Parquet or CSV, one run per file, chunk by chunk).

    Prints the base parameters with their estimates, standard deviations and the model's own
    (URDF) values, the per-joint RMS residual and, with ``--physical``, a physically consistent
    estimate. ``--json`` saves the results, ``--plot`` a figure of measured against fitted torques.
    Returns the exit status (0 on success, 2 on bad input).
    """
    from .ident import identify
    from .ident.csv_io import CSV_FORMAT, read_csv
    from .plot import plot_torques

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
    from .ident import identify
    from .ident.logs import CHUNK, read_logs

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


def _delegate(module, func, argv, what):
    import importlib
    try:
        mod = importlib.import_module(f"screwdyn.{module}")
        fn = getattr(mod, func)
    except (ImportError, AttributeError) as e:
        raise CLIError(f"'screwdyn {what}' is not available in this installation ({e})") from None
    return int(fn(argv) or 0)


# ---------------------------------------------------------------------------- parser
def cmd_compile(args):
    import os

    from .algorithms import target
    if args.native and os.environ.get("SCREWDYN_CPU", "").lower() not in ("native", "host"):
        # the target is chosen at import: run again with it (the workers inherit it)
        os.environ["SCREWDYN_CPU"] = "native"
        os.execv(sys.executable, [sys.executable, "-m", "screwdyn", *sys.argv[1:]])
    from .precompile import compile_ahead

    def report(name, seconds, done, total):
        if not args.quiet:
            print(f"screwdyn: [{done:3d}/{total}] {name:42s} {seconds:6.1f} s", flush=True)

    total = compile_ahead("install" if args.install_set else "all", jobs=args.jobs, report=report)
    print(f"screwdyn: {'the install set' if args.install_set else 'every kernel'} ready in {total:.1f} s "
          f"({target.compile_note()}; numba mode {target.MODE})")
    if args.native:
        print("screwdyn: compiled for this machine's CPU model: the processes that use this cache need "
              "SCREWDYN_CPU=native in their environment")
    return 0


def _floating_option(sp):
    sp.add_argument("--floating-base", action="store_true",
                    help="join the root link to the world by a free-flyer (q starts with x y z qx qy qz qw)")


def build_parser():
    from . import sim

    p = argparse.ArgumentParser(
        prog="screwdyn", description="Rigid-body dynamics of robot trees: inverse and forward dynamics, "
                                     "simulation, pictures, symbolic derivation, identification.",
        epilog="MODEL is a bundled robot (" + ", ".join(models.names()) + "), an MJCF or URDF file or an "
               "example-robot-data name. Vectors: numbers separated by spaces or commas, pi allowed "
               "(e.g. --q 0 -pi/4 0.5); one number means every joint. Run 'screwdyn COMMAND --help'.")
    p.add_argument("--version", action="version", version=_version())
    p.add_argument("--debug", action="store_true", help="show the Python traceback on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def add(name, help, **kw):
        sp = sub.add_parser(name, help=help, description=help, **kw)
        sp.add_argument("--debug", action="store_true", help="show the Python traceback on errors")
        return sp

    sp = add("info", "the kinematic tree, joints, masses and frames of a model")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--json", action="store_true", help="print JSON")
    _floating_option(sp)
    sp.set_defaults(func=cmd_info)

    sp = add("inverse-dynamics", "joint torques tau = M(q) qdd + C(q, qd) qd + g(q) (RNEA)")
    sp.add_argument("model", metavar="MODEL")
    for nm in ("q", "qd", "qdd"):
        sp.add_argument(f"--{nm}", metavar="V", help=f"{nm} (default zeros)")
    sp.add_argument("--friction", action="store_true", help="add the joint friction torques")
    sp.add_argument("--json", action="store_true", help="print JSON")
    _floating_option(sp)
    sp.set_defaults(func=cmd_inverse_dynamics)

    sp = add("forward-dynamics", "joint accelerations qdd for torques tau at a state (q, qd)")
    sp.add_argument("model", metavar="MODEL")
    for nm in ("q", "qd", "tau"):
        sp.add_argument(f"--{nm}", metavar="V", help=f"{nm} (default zeros)")
    sp.add_argument("--friction", action="store_true", help="include the joint friction")
    sp.add_argument("--method", default="aba", choices=("aba", "crba"), help="algorithm (default aba)")
    sp.add_argument("--json", action="store_true", help="print JSON")
    _floating_option(sp)
    sp.set_defaults(func=cmd_forward_dynamics)

    sp = add("mass-matrix", "the joint-space mass matrix M(q) (CRBA)")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--q", metavar="V", help="q (default zeros)")
    sp.add_argument("--json", action="store_true", help="print JSON")
    _floating_option(sp)
    sp.set_defaults(func=cmd_mass_matrix)

    sp = add("linearize", "the linearized dynamics A, B about a state (continuous, or one step of dt)")
    sp.add_argument("model", metavar="MODEL")
    for nm in ("q", "qd"):
        sp.add_argument(f"--{nm}", metavar="V", help=f"{nm} (default zeros)")
    sp.add_argument("--tau", metavar="V", help="joint torques (default: those that hold the state)")
    sp.add_argument("--dt", type=float, default=None, help="time step [s]: the discrete pair of one step")
    sp.add_argument("--scheme", default="rk4", choices=("rk4", "semi_implicit_euler", "euler"),
                    help="integration scheme of the discrete pair (default rk4)")
    sp.add_argument("--friction", action="store_true", help="include the joint friction")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp.set_defaults(func=cmd_linearize)

    sp = add("simulate", "simulate a robot in time; plot, animate, save",
             epilog="Without MODEL: panda, from its 'ready' pose, tracking a quintic move to --target "
                    "under computed-torque control, with its published joint friction and its joint limits. "
                    "--controller none lets it fall against its limits. Gains --kp/--kd are per unit inertia "
                    "(1/s^2, 1/s): computed torque uses them as they are, PD multiplies them by diag M(q0).")
    sp.add_argument("model", metavar="MODEL", nargs="?", default=None, help="robot (default: panda)")
    sp.add_argument("--duration", type=float, default=3.0, help="simulated time [s] (default 3)")
    sp.add_argument("--dt", type=float, default=1e-3, help="time step / sampling period [s] (default 0.001)")
    sp.add_argument("--integrator", default="rk4", choices=sim.INTEGRATORS, help="integrator (default rk4)")
    sp.add_argument("--q0", metavar="V", help="initial q (default: the bundled robot's home pose, "
                                              "else the middle of the joint limits)")
    sp.add_argument("--qd0", metavar="V", help="initial qd (default zeros)")
    sp.add_argument("--tau", metavar="V", help="constant joint torques (default: none)")
    sp.add_argument("--controller", default=None, choices=("none", "gravity", "pd", "computed-torque"),
                    help="none (passive), gravity (hold), pd (PD + gravity compensation to --target), "
                         "computed-torque (track a quintic from q0 to --target; the default without --tau)")
    sp.add_argument("--target", metavar="V", help="controller target (default q0 + 0.5, -0.46, 0.42, ... rad (0.1 m), within limits)")
    sp.add_argument("--move-time", type=float, default=None, help="duration of the quintic move [s] "
                                                                  "(default 0.8 x duration)")
    sp.add_argument("--kp", default="100", metavar="V", help="stiffness per unit inertia [1/s^2] (default 100)")
    sp.add_argument("--kd", default="20", metavar="V", help="damping per unit inertia [1/s] (default 20)")
    sp.add_argument("--gravity", metavar="V", help="gravity vector [m/s^2] (default: the model's)")
    sp.add_argument("--no-friction", action="store_true", help="ignore the model's joint friction")
    sp.add_argument("--no-limits", action="store_true", help="do not enforce the joint position limits")
    sp.add_argument("--saturate", action="store_true", help="clip the applied torques to the effort limits")
    sp.add_argument("--plot", metavar="PNG", help="save q, qd, tau and energies against time")
    sp.add_argument("--animate", metavar="GIF", help="save a video of the robot (.gif, or .mp4 with screwdyn[render])")
    sp.add_argument("--fps", type=int, default=25, help="animation frames per second (default 25)")
    sp.add_argument("--csv", metavar="CSV", help="save the trajectory as CSV")
    sp.add_argument("--npz", metavar="NPZ", help="save the trajectory as NumPy .npz")
    sp.add_argument("--progress", action="store_true", help="always show a progress bar")
    sp.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _floating_option(sp)
    sp.add_argument("--view", action="store_true", help="then show the motion in a web browser (serves until "
                                                        "Ctrl+C; needs screwdyn[viewer])")
    _view_options(sp)
    _geometry_option(sp)
    sp.set_defaults(func=cmd_simulate)

    sp = add("view", "show a robot in a web browser (viser): a configuration with a slider per joint, or a "
                     "trajectory with a time slider; serves until Ctrl+C (needs screwdyn[viewer])",
             epilog="Remote machine: run it there, then 'ssh -L 8080:localhost:8080 user@remote' here and open "
                    "http://localhost:8080.")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--q", metavar="V", help="configuration (default: a bundled robot's home pose, else zeros)")
    sp.add_argument("--trajectory", metavar="FILE", help="a trajectory (.npz or .csv of 'screwdyn simulate')")
    sp.add_argument("--frames", action="store_true", help="show the link frames' axes")
    _view_options(sp)
    _geometry_option(sp)
    _floating_option(sp)
    sp.set_defaults(func=cmd_view)

    sp = add("render", "a picture of a robot (PNG), or a video of a trajectory (--animate), without a display")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--q", metavar="V", help="configuration (default: a bundled robot's home pose, else zeros)")
    sp.add_argument("-o", "--output", default="robot.png", metavar="PNG", help="image file (default robot.png)")
    sp.add_argument("--trajectory", metavar="FILE", help="a trajectory (.npz or .csv of 'screwdyn simulate') "
                                                         "for --animate")
    sp.add_argument("--animate", metavar="GIF", help="write a video of --trajectory (.gif, or .mp4 with "
                                                     "screwdyn[render])")
    sp.add_argument("--fps", type=int, default=25, help="video frames per second (default 25)")
    sp.add_argument("--width", type=int, default=800, help="image width [px] (default 800)")
    sp.add_argument("--height", type=int, default=600, help="image height [px] (default 600)")
    sp.add_argument("--azimuth", type=float, help="camera azimuth about z from +x [deg] (default -50)")
    sp.add_argument("--elevation", type=float, help="camera elevation [deg] (default 22)")
    sp.add_argument("--distance", type=float, help="camera distance from the robot [m] (default: fitted)")
    sp.add_argument("--fov", type=float, help="vertical field of view [deg] (default 35)")
    sp.add_argument("--frames", action="store_true", help="draw the link frames' axes")
    sp.add_argument("--com", action="store_true", help="mark the centre of mass")
    sp.add_argument("--no-floor", action="store_true", help="no floor and shadow")
    _geometry_option(sp)
    _floating_option(sp)
    sp.set_defaults(func=cmd_render)

    sp = add("derive", "closed-form M(q), C(q, qd), g(q) by the Lagrangian route (SymPy)")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--latex", action="store_true", help="LaTeX output")
    sp.add_argument("--simplify", action="store_true", help="trigsimp each entry (slow beyond a few joints)")
    sp.add_argument("--cse", action="store_true", help="pull out common subexpressions")
    sp.set_defaults(func=cmd_derive)

    sp = add("compile", "compile every numba kernel into numba's cache now, in parallel over the cores (pip "
                        "install compiles the main ones; every other compiles on its first use): for a Docker "
                        "image, cluster workers, NUMBA_CACHE_DIR, a read-only install")
    sp.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: one per core)")
    sp.add_argument("--native", action="store_true",
                    help="for this machine's CPU model instead of the portable x86-64-v3 level (the processes "
                         "using the cache then need SCREWDYN_CPU=native)")
    sp.add_argument("--install-set", action="store_true", help="only what pip install compiles")
    sp.add_argument("--quiet", action="store_true", help="print only the total")
    sp.set_defaults(func=cmd_compile)

    for name, help in (("identify", "identify inertial parameters from measured data "
                                    "(run 'screwdyn identify --help')"),
                       ("bench", "time screwdyn against Pinocchio (run 'screwdyn bench --help')")):
        sp = sub.add_parser(name, help=help, description=help, add_help=False)
        sp.add_argument("rest", nargs=argparse.REMAINDER)
        sp.set_defaults(func=None)
    return p


def _version():
    try:
        from . import __version__
    except ImportError:
        __version__ = "?"
    return f"screwdyn {__version__}"


def _showwarning(message, category, filename, lineno, file=None, line=None):
    print(f"screwdyn: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # identify and bench parse their own arguments
    for k, tok in enumerate(argv):
        if not tok.startswith("-"):
            if tok in ("identify", "bench"):
                debug = "--debug" in argv[:k]
                rest = argv[k + 1:]
                if tok == "identify":
                    return _run(lambda: ident_cli(rest), debug)
                return _run(lambda: _delegate("bench", "main", rest, tok), debug)
            break
    debug = "--debug" in argv
    parser = build_parser()
    args = parser.parse_args(_join_vectors(argv))
    if args.command is None:
        parser.print_help()
        return 2
    return _run(lambda: args.func(args), debug)


def _run(fn, debug):
    from .errors import ScrewdynError

    old = warnings.showwarning
    warnings.showwarning = _showwarning
    try:
        return fn()
    except KeyboardInterrupt:
        print("\nscrewdyn: interrupted", file=sys.stderr)
        return 130
    except (CLIError, ScrewdynError, OSError, ValueError, ImportError, np.linalg.LinAlgError) as e:
        if debug:
            raise
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"screwdyn: error: {msg}", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = old
