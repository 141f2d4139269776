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
    screwdyn compile                             every kernel into numba's cache

MODEL is a bundled robot (``screwdyn.models.names()``), a MuJoCo MJCF file, a URDF file, or an
example-robot-data robot name, tried in that order (:func:`screwdyn.models.resolve`). Vectors are numbers separated
by spaces or commas, ``pi`` allowed (``--q 0 -pi/4 0 -3pi/4 0 pi/2 pi/4``); a single number is
used for every joint.
Errors print one line on stderr and exit with status 2; ``--debug`` shows the traceback.
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from .. import models
from .common import CLIError, _delegate, _join_vectors, parse_vector
from .compile import add_compile_command
from .dynamics import add_derive_command, add_state_commands
from .identify import ident_cli
from .simulate import add_simulate_command
from .views import add_view_commands

__all__ = ["main", "parse_vector", "ident_cli"]


def build_parser():
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

    add_state_commands(add)      # info, inverse-dynamics, forward-dynamics, mass-matrix, linearize
    add_simulate_command(add)
    add_view_commands(add)       # view, render
    add_derive_command(add)
    add_compile_command(add)

    for name, help in (("identify", "identify inertial parameters from measured data "
                                    "(run 'screwdyn identify --help')"),
                       ("bench", "time screwdyn against Pinocchio (run 'screwdyn bench --help')")):
        sp = sub.add_parser(name, help=help, description=help, add_help=False)
        sp.add_argument("rest", nargs=argparse.REMAINDER)
        sp.set_defaults(func=None)
    return p


def _version():
    try:
        from .. import __version__
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
    from ..errors import ScrewdynError

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
