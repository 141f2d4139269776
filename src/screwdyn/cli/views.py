"""``view`` and ``render``: a robot or a saved trajectory in a web browser, or as a picture or
video without a display."""
from __future__ import annotations

import sys

import numpy as np

from .. import models
from .common import CLIError, _floating_option, _geometry_option, _load, _view_options, parse_vector


def _serve(model, what, args):
    """Serve the browser viewer of ``what`` (q or a trajectory) until Ctrl+C."""
    from ..viz import view

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


def _trajectory_file(path, model):
    """A trajectory saved by 'screwdyn simulate --npz/--csv' (or Trajectory.to_npz / to_csv)."""
    from ..sim import Trajectory

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
    from ..viz import animate, render

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


def add_view_commands(add):
    """The parsers of view and render."""
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
