"""``info``, ``inverse-dynamics``, ``forward-dynamics``, ``mass-matrix``, ``linearize``, ``derive``:
a model and its dynamics at one state."""
from __future__ import annotations

import sys

import numpy as np

from .. import models
from .common import CLIError, _floating_option, _fmt, _load, _print_json, _print_named, _state, parse_vector

_TYPE_NAMES = ("revolute", "prismatic", "free_flyer", "spherical")


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


def cmd_derive(args):
    model = models.load(args.model)
    try:
        from ..symbolic import derive_text
    except ImportError as e:
        raise CLIError(f"symbolic derivation is not available: {e}") from None
    if model.n > 4 and not args.cse:
        print(f"screwdyn: note: {model.n} joints: the closed form is long; --cse shortens it", file=sys.stderr)
    print(derive_text(model, latex=args.latex, simplify=args.simplify, cse=args.cse), end="")
    return 0


def add_state_commands(add):
    """The parsers of info, inverse-dynamics, forward-dynamics, mass-matrix, linearize."""
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


def add_derive_command(add):
    """The parser of derive."""
    sp = add("derive", "closed-form M(q), C(q, qd), g(q) by the Lagrangian route (SymPy)")
    sp.add_argument("model", metavar="MODEL")
    sp.add_argument("--latex", action="store_true", help="LaTeX output")
    sp.add_argument("--simplify", action="store_true", help="trigsimp each entry (slow beyond a few joints)")
    sp.add_argument("--cse", action="store_true", help="pull out common subexpressions")
    sp.set_defaults(func=cmd_derive)
