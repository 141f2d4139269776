"""``linearize`` (docs/theory.md §14.6): the continuous pair against central differences of the
vector field, each discrete scheme against central differences of the very step ``simulate``
takes, the holding torque, batches, ``out=``, and Radau's analytic Jacobian in ``simulate``."""
import numpy as np
import pytest

import screwdyn
from helpers import central, random_model, random_state, rel


@pytest.fixture(scope="module")
def system():
    rng = np.random.default_rng(7)
    model = random_model(rng, n=3, fixed=1, armature=True)
    q, qd, tau = random_state(rng, model.n)
    return model, q, qd, tau, rng.normal(size=(model.n, 6))


def test_continuous_pair_is_the_jacobian_of_the_vector_field(system):
    """A and B of xdot = (qd, FD(q, qd, tau)) with friction and wrenches, by central differences."""
    model, q, qd, tau, F = system
    n = model.n
    A, B = screwdyn.linearize(model, q, qd, tau, f_ext=F, friction=True)

    def xdot(x, u=tau):
        return np.concatenate([x[n:], screwdyn.forward_dynamics(model, x[:n], x[n:], u, F, friction=True)])
    x = np.concatenate([q, qd])
    assert rel(A, central(xdot, x)) < 1e-7
    assert rel(B, central(lambda u: xdot(x, u), tau)) < 1e-7
    assert np.array_equal(A[:n, :n], np.zeros((n, n))) and np.array_equal(A[:n, n:], np.eye(n))


def one_step(model, x, u, h, scheme):
    """One step of docs/theory.md (13.2)-(13.4) with tau = u held."""
    n = model.n

    def f(x):
        return np.concatenate([x[n:], screwdyn.forward_dynamics(model, x[:n], x[n:], u)])
    if scheme == "euler":
        return x + h * f(x)
    if scheme == "semi_implicit_euler":
        qd = x[n:] + h * f(x)[n:]
        return np.concatenate([x[:n] + h * qd, qd])
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


@pytest.mark.parametrize("scheme", screwdyn.dynamics.LINEARIZE_SCHEMES)
def test_discrete_pair_is_the_jacobian_of_one_simulated_step(system, scheme):
    """(A_d, B_d) of each scheme: central differences of one step (docs/theory.md (14.13), (14.14)),
    the step being the one simulate takes with that integrator and tau held."""
    model, q, qd, tau, _ = system
    h = 0.02
    x = np.concatenate([q, qd])
    traj = screwdyn.simulate(model, q, qd, duration=h, dt=h, tau=tau, integrator=scheme, friction=False)
    assert rel(np.concatenate([traj.q[-1], traj.qd[-1]]), one_step(model, x, tau, h, scheme)) < 1e-15
    A, B = screwdyn.linearize(model, q, qd, tau, dt=h, scheme=scheme)
    assert rel(A, central(lambda y: one_step(model, y, tau, h, scheme), x)) < 1e-8
    assert rel(B, central(lambda u: one_step(model, x, u, h, scheme), tau, eps=1e-3)) < 1e-8


def test_default_torque_holds_the_state_and_batches_equal_single_states(system):
    """tau=None linearizes about inverse_dynamics(q, qd, 0): the acceleration there is zero. A (2, 3)
    batch equals its single states."""
    model, q, qd, _, F = system
    hold = screwdyn.inverse_dynamics(model, q, qd, np.zeros(model.n), F, friction=True)
    assert np.abs(screwdyn.forward_dynamics(model, q, qd, hold, F, friction=True)).max() < 1e-10
    for a, b in zip(screwdyn.linearize(model, q, qd, f_ext=F, friction=True),
                    screwdyn.linearize(model, q, qd, hold, f_ext=F, friction=True)):
        assert np.array_equal(a, b)
    Q, QD, T = random_state(np.random.default_rng(1), model.n, (2, 3))
    A, B = screwdyn.linearize(model, Q, QD, T, dt=0.01)
    assert A.shape == (2, 3, 2 * model.n, 2 * model.n) and B.shape == (2, 3, 2 * model.n, model.n)
    A1, B1 = screwdyn.linearize(model, Q[1, 2], QD[1, 2], T[1, 2], dt=0.01)
    assert rel(A[1, 2], A1) < 1e-15 and rel(B[1, 2], B1) < 1e-15


def test_out_and_bad_arguments(system):
    model, q, qd, tau, _ = system
    n = model.n
    out = (np.empty((2 * n, 2 * n)), np.empty((2 * n, n)))
    A, B = screwdyn.linearize(model, q, qd, tau, dt=0.01, scheme="semi_implicit_euler", out=out)
    assert A is out[0] and B is out[1]
    with pytest.raises(screwdyn.InputError, match="dt must be"):
        screwdyn.linearize(model, q, qd, tau, dt=-1.0)
    with pytest.raises(screwdyn.InputError, match="scheme must be one of"):
        screwdyn.linearize(model, q, qd, tau, dt=0.01, scheme="rk2")
    with pytest.raises(screwdyn.InputError, match=r"out\[1\] must be"):
        screwdyn.linearize(model, q, qd, tau, out=(out[0], np.empty((n, n))))


def test_upright_pendulum_is_unstable_and_hanging_is_a_centre():
    """The pendulum's A: eigenvalues +-sqrt(m g d / I) upright, +-i sqrt(m g d / I) hanging."""
    model = screwdyn.models.load("pendulum")
    I = screwdyn.mass_matrix(model, [0.0])[0, 0]
    k = screwdyn.inverse_dynamics_derivatives(model, [0.0], [0.0], [0.0])[0][0, 0] / I    # m g d / I
    up = np.linalg.eigvals(screwdyn.linearize(model, [np.pi], [0.0])[0])
    down = np.linalg.eigvals(screwdyn.linearize(model, [0.0], [0.0])[0])
    assert k > 0
    assert np.allclose(np.sort(up.real), [-np.sqrt(k), np.sqrt(k)], rtol=1e-12)
    assert np.allclose(np.sort(down.imag), [-np.sqrt(k), np.sqrt(k)], rtol=1e-12) and np.allclose(down.real, 0)


def test_radau_gets_the_analytic_jacobian(monkeypatch):
    """simulate(integrator="Radau") hands solve_ivp the Jacobian of linearize (not SciPy's
    differences) when tau is not a controller; the motion equals the one with differences."""
    model = screwdyn.models.load("planar_2r").replace(damping=np.array([30.0, 30.0]))
    calls = []
    original = screwdyn.linearize

    def counted(*args, **kwargs):
        calls.append(kwargs.get("friction"))
        return original(*args, **kwargs)
    monkeypatch.setattr(screwdyn, "linearize", counted)
    kw = {"duration": 0.5, "dt": 0.01, "integrator": "Radau", "tau": [1.0, -0.5], "rtol": 1e-9, "atol": 1e-11}
    ours = screwdyn.simulate(model, [0.3, -0.2], [0.0, 0.0], **kw)
    assert calls and all(calls)          # friction (the damping) is part of the Jacobian
    calls.clear()
    theirs = screwdyn.simulate(model, [0.3, -0.2], [0.0, 0.0], ivp_options={"jac": None}, **kw)
    assert not calls
    assert np.abs(ours.q - theirs.q).max() < 1e-7
    screwdyn.simulate(model, [0.3, -0.2], [0.0, 0.0], **{**kw, "tau": lambda t, q, qd: -qd})
    assert not calls                     # a controller: SciPy's differences


def test_free_flyer_continuous_pair_in_tangent_coordinates():
    """On a free-flyer with a spherical joint, x = (q, qd) is perturbed in tangent coordinates,
    q' = q (+) dq (screwdyn.integrate). The top rows of A, d/dt dq = dqd - [ad_V] dq, against the
    flow of q seen through screwdyn.difference (central differences in time and in the
    perturbation); the bottom rows against central differences of forward_dynamics."""
    rng = np.random.default_rng(3)
    model = random_model(rng, n=3, fixed=0, spherical=0.5, floating=True)
    assert not model._one_dof
    n = model.nv
    q = screwdyn.random_configuration(model, rng)
    qd, tau = rng.normal(size=n), rng.normal(size=n)
    A, B = screwdyn.linearize(model, q, qd, tau)

    def top(dx, t=1e-3):
        def delta(s):   # difference(q(s), q'(s)) with both moving at their own qd for a time s
            moved = screwdyn.integrate(model, q, dx[:n])
            return screwdyn.difference(model, screwdyn.integrate(model, q, s * qd),
                                       screwdyn.integrate(model, moved, s * (qd + dx[n:])))
        return (delta(t) - delta(-t)) / (2 * t)
    top_cols = central(top, np.zeros(2 * n), eps=1e-5)
    assert rel(A[:n], top_cols) < 1e-6
    assert not np.array_equal(A[:6, :6], np.zeros((6, 6)))        # the free-flyer's -[ad_V]

    def bottom(dx):
        return screwdyn.forward_dynamics(model, screwdyn.integrate(model, q, dx[:n]), qd + dx[n:], tau)
    assert rel(A[n:], central(bottom, np.zeros(2 * n))) < 1e-6
    assert np.array_equal(B[n:], screwdyn.forward_dynamics_derivatives(model, q, qd, tau)[2])
    with pytest.raises(screwdyn.InputError, match="configuration manifold"):
        screwdyn.linearize(model, q, qd, tau, dt=0.01)


def test_the_lqr_and_ilqr_examples_run():
    """examples/lqr_upright.py (LQR on linearize, the closed loop simulated back to upright) and
    examples/ilqr_swing_up.py (iLQR on batched discrete linearizations, replayed by simulate):
    each asserts its own result; a few iLQR iterations suffice to reach the top within 1e-2."""
    import importlib.util
    import pathlib

    folder = pathlib.Path(__file__).resolve().parent.parent / "examples"

    def load(name):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    assert load("lqr_upright").main(["--plot", ""]) < 1e-5
    assert load("ilqr_swing_up").main(["--plot", "", "--iterations", "8"]) < 1e-2
