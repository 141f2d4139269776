"""screwdyn.symbolic.ConstrainedDynamics: holonomic constraints by Lagrange multipliers in closed
form (docs/theory.md §15.8), against the pendulum's closed form and against the numeric constrained
dynamics on a closed four-bar (the worked example of examples/symbolic_worked_examples.py)."""
import doctest
import runpy
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import screwdyn
from screwdyn.errors import InputError
from screwdyn.symbolic import ConstrainedDynamics, Dynamics
from screwdyn.symbolic import constrained as symbolic_constrained
from screwdyn.symbolic.examples import four_bar, particle_xy

EXAMPLES = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "symbolic_worked_examples.py"))


def test_doctests_of_the_module():
    failed, attempted = doctest.testmod(symbolic_constrained)
    assert attempted > 0 and failed == 0


def test_a_mass_on_a_circle_is_a_pendulum_with_its_rods_tension():
    EXAMPLES["pendulum_on_a_circle"]()


@pytest.mark.parametrize("q1", [0.7, 2.5, -1.9])
def test_the_closed_four_bar_agrees_with_the_numeric_constrained_dynamics(q1):
    """The multipliers (the pin's force, world axes) and accelerations from the symbolic KKT system
    equal screwdyn.constrained_forward_dynamics with a PointLoop, whose third (normal) row is
    redundant and gets no force; the state is assembled, its velocity along the one freedom."""
    model, s = four_bar()
    dyn = Dynamics(model)
    cd = ConstrainedDynamics.point(dyn, "tip", anchor=(s.d, 0, 0), rows=(0, 1))
    numbers = {s.L1: 0.3, s.L2: 1.0, s.L3: 0.8, s.d: 1.0, s.m1: 1.0, s.m2: 2.0, s.m3: 1.5, s.g: 9.81}
    q = EXAMPLES["assembled_four_bar"](0.3, 1.0, 0.8, 1.0, q1)
    numeric = model.subs(numbers).to_model()
    loop = screwdyn.PointLoop(numeric, "tip", "base", offset_b=(1.0, 0.0, 0.0), reference="world")
    closed = numeric.replace(constraints=(loop,))
    assert np.abs(screwdyn.constraint_error(closed, q)).max() < 1e-12
    A = np.array(cd.A.subs(numbers).subs(dict(zip(dyn.q, q))), dtype=float)
    assert np.allclose(A, screwdyn.constraint_jacobian(closed, q)[:2], atol=1e-12)
    qd = np.linalg.svd(A)[2][-1] * 1.5
    tau = np.array([0.5, 1.0, -0.3])
    state = {**numbers, **dict(zip(dyn.q, q)), **dict(zip(dyn.qd, qd))}
    qdd_s, lam_s = (np.array(v, dtype=float).ravel() for v in cd.solve(tau, values=state))
    qdd, lam = screwdyn.constrained_forward_dynamics(closed, q, qd, tau)
    assert np.abs(qdd - qdd_s).max() < 1e-10 * np.abs(qdd_s).max()
    assert np.abs(lam[:2] - lam_s).max() < 1e-10 * np.abs(lam_s).max() and abs(lam[2]) < 1e-12
    assert EXAMPLES["closed_four_bar"]() < 1e-10


def test_constraints_must_be_holonomic_and_multipliers_match():
    model, s = particle_xy()
    dyn = Dynamics(model)
    x, y = dyn.q
    with pytest.raises(InputError, match="positions q only"):
        ConstrainedDynamics(dyn, [x * dyn.qd[0]])
    with pytest.raises(InputError, match="at least one"):
        ConstrainedDynamics(dyn, [])
    with pytest.raises(InputError, match="2 symbols"):
        ConstrainedDynamics(dyn, [x, y], lam=sp.symbols("a"))
    cd = ConstrainedDynamics(dyn, [y + 1])          # held on a horizontal line: lam balances gravity
    qdd, lam = cd.solve()
    assert list(qdd) == [0, 0] and sp.simplify(lam[0] - s.m * s.g) == 0
    assert cd.equations.subs({dyn.qdd[0]: 0, dyn.qdd[1]: 0, cd.lam[0]: s.m * s.g, **dict(zip(cd.tau, (0, 0)))}) == \
        sp.zeros(3, 1)
