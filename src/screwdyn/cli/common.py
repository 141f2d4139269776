"""What the commands share: reading vectors (``--q 0 -pi/4 0.5``), the model and state options,
printing, and the user's errors (:class:`CLIError`)."""
from __future__ import annotations

import json
import math
import re

import numpy as np

from .. import models

_VECTOR_OPTS = ("--q", "--qd", "--qdd", "--tau", "--q0", "--qd0", "--target", "--kp", "--kd", "--gravity")
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TOKEN = re.compile(rf"^([+-]?)(?:({_NUM})|({_NUM})?\*?pi(?:/({_NUM}))?)$")
_VECTOR_ARG = re.compile(rf"^[+-]?(?:{_NUM}|(?:{_NUM})?\*?pi(?:/{_NUM})?)(?:,[+-]?(?:{_NUM}|(?:{_NUM})?\*?pi(?:/{_NUM})?))*,?$")


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


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
    from ..configuration import neutral

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


def _print_named(model, x):
    names = model.v_names
    w = max(len(j) for j in names)
    for jn, v in zip(names, x):
        print(f"  {jn:<{w}}  {v: .10g}")


def _floating_option(sp):
    sp.add_argument("--floating-base", action="store_true",
                    help="join the root link to the world by a free-flyer (q starts with x y z qx qy qz qw)")


def _view_options(sp):
    sp.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: the network)")
    sp.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if taken)")


def _geometry_option(sp):
    sp.add_argument("--geometry", default="auto", choices=("auto", "visual", "skeleton"),
                    help="the URDF's visual meshes, a stick figure with volume, or auto (meshes when "
                         "there are any; default)")


def _delegate(module, func, argv, what):
    import importlib
    try:
        mod = importlib.import_module(f"screwdyn.{module}")
        fn = getattr(mod, func)
    except (ImportError, AttributeError) as e:
        raise CLIError(f"'screwdyn {what}' is not available in this installation ({e})") from None
    return int(fn(argv) or 0)
