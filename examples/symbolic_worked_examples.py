"""The worked examples of docs/theory.md §7.5, and a few more, derived in closed form with
screwdyn.symbolic.

Run:  python examples/symbolic_worked_examples.py [--latex]

The last two are constrained (docs/theory.md §15.8): a point mass held on a circle by a Lagrange
multiplier (a pendulum, its rod's tension in closed form), and a closed four-bar whose Lagrange
multipliers (the pin's force) and accelerations are checked against the numeric constrained
dynamics, :func:`screwdyn.constrained_forward_dynamics` with a :class:`screwdyn.PointLoop`.

Each example builds a symbolic model, derives ``tau = M(q) qdd + C(q, qd) qd + g(q)`` by the
Euler-Lagrange route, prints it, and checks it against its closed form
(``simplify(ours - expected) == 0``) and against the symbolic recursive Newton-Euler algorithm.
The closed forms of the planar 2R, the PR robot and the pendulum are those of docs/theory.md
§7.5; the others, which the document does not treat, are those of the docstrings of
:mod:`screwdyn.symbolic.examples`.
"""
import sys

import numpy as np
import sympy as sp

import screwdyn
from screwdyn.symbolic import ConstrainedDynamics, Dynamics, lagrange_equations, rnea, trig_equal
from screwdyn.symbolic.examples import (
    bent_link, cartesian_ppp, four_bar, particle_xy, pendulum, planar_2r, planar_rp, pr_robot,
)


def same(a, b):
    return all(sp.simplify(e) == 0 for e in sp.Matrix(a) - sp.Matrix(b))


def show(title, dyn, latex):
    print(f"\n== {title} ==")
    if latex:
        print(dyn.latex(("M", "coriolis", "g")))
        return
    for name, value in (("M(q)", dyn.M), ("c(q, qd) = C qd", dyn.coriolis), ("g(q)", dyn.g)):
        print(f"{name} = {value.tolist() if value.cols > 1 else list(value)}")


def check(title, dyn, **expected):
    for key, value in expected.items():
        ours = dyn.coriolis if key == "c" else getattr(dyn, key)
        assert same(ours, value), f"{title}: {key} differs from the closed form"
    assert trig_equal(rnea(dyn.model, dyn.q, dyn.qd, dyn.qdd), dyn.tau, list(dyn.q)), f"{title}: RNEA differs"
    print(f"   {', '.join(expected)} as in the closed form; Lagrangian = RNEA")


def main(latex=False):
    # The bent link (constant angle phi) turning about the vertical axis.
    model, s = bent_link()
    dyn = Dynamics(model, simplify=True)
    show("bent link", dyn, latex)
    check("bent link", dyn, M=sp.Matrix([[s.m2 * s.l2**2 * sp.cos(s.phi) ** 2]]), g=sp.zeros(1, 1))

    # Planar 2R with point masses, gravity along -y: docs/theory.md §7.5, eqs. (7.13)-(7.15).
    model, s = planar_2r()
    dyn = Dynamics(model, simplify=True)
    (t1, t2), (d1, d2) = dyn.q, dyn.qd
    c2 = sp.cos(t2)
    show("planar 2R (docs/theory.md §7.5)", dyn, latex)
    check("planar 2R", dyn,
          M=sp.Matrix([[s.m1 * s.L1**2 + s.m2 * (s.L1**2 + 2 * s.L1 * s.L2 * c2 + s.L2**2),
                        s.m2 * (s.L1 * s.L2 * c2 + s.L2**2)],
                       [s.m2 * (s.L1 * s.L2 * c2 + s.L2**2), s.m2 * s.L2**2]]),
          c=sp.Matrix([-s.m2 * s.L1 * s.L2 * sp.sin(t2) * (2 * d1 * d2 + d2**2), s.m2 * s.L1 * s.L2 * d1**2 * sp.sin(t2)]),
          g=sp.Matrix([(s.m1 + s.m2) * s.L1 * s.g * sp.cos(t1) + s.m2 * s.g * s.L2 * sp.cos(t1 + t2),
                       s.m2 * s.g * s.L2 * sp.cos(t1 + t2)]))

    # Planar RP.
    model, s = planar_rp()
    dyn = Dynamics(model, simplify=True)
    (t1, r), (d1, rd) = dyn.q, dyn.qd
    show("planar RP", dyn, latex)
    check("planar RP", dyn, M=sp.diag(s.m1 * s.L1**2 + s.m2 * r**2, s.m2),
          c=sp.Matrix([2 * s.m2 * r * d1 * rd, -s.m2 * r * d1**2]),
          g=sp.Matrix([(s.m1 * s.L1 + s.m2 * r) * s.g * sp.cos(t1), s.m2 * s.g * sp.sin(t1)]))

    # Cartesian PPP.
    model, s = cartesian_ppp()
    dyn = Dynamics(model, simplify=True)
    show("Cartesian PPP", dyn, latex)
    check("Cartesian PPP", dyn, M=sp.diag(s.m1 + s.m2 + s.m3, s.m2 + s.m3, s.m3), c=sp.zeros(3, 1),
          g=sp.Matrix([(s.m1 + s.m2 + s.m3) * s.g, 0, 0]))

    # The PR robot on a horizontal plane: docs/theory.md §7.5, eq. (7.16).
    model, s = pr_robot()
    dyn = Dynamics(model, simplify=True)
    q2, qd2 = dyn.q[1], dyn.qd[1]
    show("PR robot (docs/theory.md §7.5)", dyn, latex)
    check("PR robot", dyn,
          M=sp.Matrix([[s.m1 + s.m2, -s.m2 * s.dc2 * sp.sin(q2)], [-s.m2 * s.dc2 * sp.sin(q2), s.Ic2zz + s.m2 * s.dc2**2]]),
          c=sp.Matrix([-s.m2 * s.dc2 * sp.cos(q2) * qd2**2, 0]), g=sp.zeros(2, 1))

    # The actuated pendulum with gear, rotor inertia, viscous friction and a tip force:
    # docs/theory.md §7.5, eq. (7.18).
    model, s = pendulum()
    dyn = Dynamics(model, simplify=True)
    show("actuated pendulum (docs/theory.md §7.5)", dyn, latex)
    tau_m, F_x = sp.symbols("tau_m F_x", real=True)
    (th,), (thd,), (thdd,) = dyn.q, dyn.qd, dyn.qdd
    I = s.I_l + s.m * s.d**2 + s.I_m * s.n_r**2
    note = I * thdd + s.m * s.g0 * s.d * sp.sin(th) - (s.n_r * tau_m - (s.b_l + s.b_m * s.n_r**2) * thd
                                                       + s.l * sp.cos(th) * F_x)
    ours = dyn.tau[0] - s.n_r * tau_m - dyn.generalized_force("tip", (0, 0, 0), (F_x, 0, 0))[0]
    assert same([ours], [note]), "pendulum: differs from docs/theory.md eq. (7.18)"
    print("   I thdd + m g0 d sin th = n_r tau_m - (b_l + b_m n_r^2) thd + l cos th F_x, "
          "I = I_l + m d^2 + I_m n_r^2, as in docs/theory.md eq. (7.18)")
    # ... and in the motor angle theta_m = n_r theta, straight from the energies: eq. (7.19).
    thm, thmd, thmdd = sp.symbols("theta_m thetad_m thetadd_m", real=True)
    T = (s.I_l + s.m * s.d**2) * (thmd / s.n_r) ** 2 / 2 + s.I_m * thmd**2 / 2
    U = -s.m * s.g0 * s.d * sp.cos(thm / s.n_r)
    Q = tau_m - (s.b_l / s.n_r**2 + s.b_m) * thmd + s.l / s.n_r * sp.cos(thm / s.n_r) * F_x
    E = lagrange_equations(T, U, [thm], [thmd], [thmdd], [Q])[0]
    note_m = (I / s.n_r**2 * thmdd + s.m / s.n_r * s.g0 * s.d * sp.sin(thm / s.n_r)
              - (tau_m - (s.b_l / s.n_r**2 + s.b_m) * thmd + s.l / s.n_r * sp.cos(thm / s.n_r) * F_x))
    assert same([E], [note_m]), "pendulum in theta_m: differs from docs/theory.md eq. (7.19)"
    print(f"   in q = theta_m: {sp.collect(sp.expand(E), [thmdd, thmd])} = 0, as in docs/theory.md eq. (7.19)")

    # A particle on a vertical line, from its energies (docs/theory.md eq. (7.1) applied directly).
    m, g = sp.symbols("m g", positive=True)
    x, xd = sp.symbols("x xd", real=True)
    f = lagrange_equations(m * xd**2 / 2, m * g * x, [x], [xd])[0]
    print(f"\n== particle on a vertical line ==\nf = {f}")
    assert same([f], [m * sp.Symbol("xdd", real=True) + m * g])

    pendulum_on_a_circle()
    closed_four_bar()
    print("\nall worked examples agree with their closed forms")


def pendulum_on_a_circle():
    """A point mass in a vertical plane held on the circle x^2 + y^2 = l^2 by a Lagrange multiplier:
    the pendulum, and its rod's tension m (l thd^2 + g cos th) (docs/theory.md eq. (15.15))."""
    model, s = particle_xy()
    dyn = Dynamics(model)
    (x, y), (xd, yd) = dyn.q, dyn.qd
    cd = ConstrainedDynamics(dyn, [(x**2 + y**2 - s.l**2) / 2])
    (xdd, ydd), (lam,) = cd.solve(simplify=True)
    print(f"\n== a point mass held on a circle (docs/theory.md §15.8) ==\nlambda = {lam}")
    th, thd = sp.symbols("theta thetad", real=True)
    on_circle = {x: s.l * sp.sin(th), y: -s.l * sp.cos(th), xd: s.l * sp.cos(th) * thd, yd: s.l * sp.sin(th) * thd}
    tension = sp.simplify(-lam.subs(on_circle) * s.l)
    assert sp.simplify(tension - s.m * (s.l * thd**2 + s.g * sp.cos(th))) == 0
    thdd = sp.simplify((sp.cos(th) * xdd + sp.sin(th) * ydd).subs(on_circle) / s.l)   # the tangential acceleration
    assert sp.simplify(thdd + s.g / s.l * sp.sin(th)) == 0
    print("   tension -lambda l = m (l thd^2 + g cos th), thdd = -(g / l) sin th: the pendulum, eq. (15.15)")


def assembled_four_bar(L1, L2, L3, d, q1):
    """``q`` closing the four-bar for the crank angle ``q1`` (the coupler and rocker meet where the
    circles of radii ``L2`` about the crank's tip and ``L3`` about the ground pin cross)."""
    P1, G = L1 * np.array([np.cos(q1), np.sin(q1)]), np.array([d, 0.0])
    e = G - P1
    r = np.linalg.norm(e)
    a = (L2**2 - L3**2 + r**2) / (2 * r)
    P2 = P1 + a * e / r + np.sqrt(L2**2 - a**2) * np.array([-e[1], e[0]]) / r
    q2 = np.arctan2(*(P2 - P1)[::-1]) - q1
    q3 = np.arctan2(*(G - P2)[::-1]) - q1 - q2
    return np.array([q1, q2, q3])


def closed_four_bar(tol=1e-10):
    """The four-bar's KKT system derived symbolically (M, C qd + g, A = d phi / dq, Adot qd), solved at
    an assembled state, against screwdyn's compiled constrained dynamics of the same model closed
    by a PointLoop (world axes: its force is the multiplier). Returns the largest relative difference."""
    model, s = four_bar()
    dyn = Dynamics(model)
    cd = ConstrainedDynamics.point(dyn, "tip", anchor=(s.d, 0, 0), rows=(0, 1))
    numbers = {s.L1: 0.3, s.L2: 1.0, s.L3: 0.8, s.d: 1.0, s.m1: 1.0, s.m2: 2.0, s.m3: 1.5, s.g: 9.81}
    q = assembled_four_bar(0.3, 1.0, 0.8, 1.0, q1=0.7)
    A = np.array(cd.A.subs(numbers).subs(dict(zip(dyn.q, q))), dtype=float)
    qd = np.linalg.svd(A)[2][-1] * 2.0                       # a velocity along the mechanism's one freedom
    tau = np.array([1.5, -0.4, 0.2])
    state = {**numbers, **dict(zip(dyn.q, q)), **dict(zip(dyn.qd, qd))}
    qdd_s, lam_s = (np.array(v, dtype=float).ravel() for v in cd.solve(tau, values=state))

    numeric = model.subs(numbers).to_model()
    loop = screwdyn.PointLoop(numeric, "tip", "base", offset_b=(1.0, 0.0, 0.0), reference="world")
    qdd, lam = screwdyn.constrained_forward_dynamics(numeric.replace(constraints=(loop,)), q, qd, tau)
    worst = max(np.abs(qdd - qdd_s).max() / np.abs(qdd_s).max(), np.abs(lam[:2] - lam_s).max() / np.abs(lam_s).max())
    print(f"\n== closed four-bar (docs/theory.md §15.8) ==\nqdd = {qdd_s}, lambda = {lam_s} (the pin's force)")
    print(f"   screwdyn.constrained_forward_dynamics: qdd and lambda within {worst:.1e}; the third (normal) row of the "
          f"loop, redundant, gets lambda_z = {lam[2]:.1e}")
    assert worst < tol and abs(lam[2]) < tol * np.abs(lam).max()
    return worst


if __name__ == "__main__":
    main(latex="--latex" in sys.argv)
