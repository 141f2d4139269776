"""The worked examples of docs/theory.md §7.5, and a few more, derived in closed form with
screwdyn.symbolic.

Run:  python examples/symbolic_worked_examples.py [--latex]

Each example builds a symbolic model, derives ``tau = M(q) qdd + C(q, qd) qd + g(q)`` by the
Euler-Lagrange route, prints it, and checks it against its closed form
(``simplify(ours - expected) == 0``) and against the symbolic recursive Newton-Euler algorithm.
The closed forms of the planar 2R, the PR robot and the pendulum are those of docs/theory.md
§7.5; the others, which the document does not treat, are those of the docstrings of
:mod:`screwdyn.symbolic.examples`.
"""
import sys

import sympy as sp

from screwdyn.symbolic import Dynamics, lagrange_equations, rnea, trig_equal
from screwdyn.symbolic.examples import bent_link, cartesian_ppp, pendulum, planar_2r, planar_rp, pr_robot


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

    print("\nall worked examples agree with their closed forms")


if __name__ == "__main__":
    main(latex="--latex" in sys.argv)
