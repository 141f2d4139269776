"""screwdyn.torch: gradients from the analytic derivatives against torch.autograd.gradcheck (finite
differences, float64), broadcasting, and the step against simulate."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import screwdyn                   # noqa: E402
import screwdyn.torch as sdt      # noqa: E402
from screwdyn import models       # noqa: E402


@pytest.fixture(scope="module")
def ur5():
    return models.load("ur5")


def _states(rng, shape=(3, 6)):
    return tuple(torch.tensor(rng.normal(size=shape), requires_grad=True) for _ in range(3))


def test_inverse_dynamics_gradcheck(ur5, rng):
    assert torch.autograd.gradcheck(lambda a, b, c: sdt.inverse_dynamics(ur5, a, b, c), _states(rng))


def test_forward_dynamics_gradcheck(ur5, rng):
    assert torch.autograd.gradcheck(lambda a, b, c: sdt.forward_dynamics(ur5, a, b, c), _states(rng))


@pytest.mark.parametrize("scheme", ["rk4", "semi_implicit_euler"])
def test_step_gradcheck_and_value(ur5, rng, scheme):
    q, qd, tau = _states(rng)
    assert torch.autograd.gradcheck(lambda a, b, c: sdt.step(ur5, a, b, c, 2e-3, scheme), (q, qd, tau))
    q1, qd1 = sdt.step(ur5, q, qd, tau, 2e-3, scheme)
    traj = screwdyn.simulate(ur5, q[1].detach().numpy(), qd[1].detach().numpy(), duration=2e-3, dt=2e-3,
                             tau=tau[1].detach().numpy(), integrator=scheme, friction=False, joint_limits=False)
    np.testing.assert_allclose(q1[1].detach().numpy(), traj.q[-1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(qd1[1].detach().numpy(), traj.qd[-1], rtol=0, atol=1e-12)


def test_gradient_is_the_mass_matrix_and_broadcasts(ur5, rng):
    """d tau / d qdd = M: the gradient of w . tau in qdd is M w; a qdd shared by the batch gets the sum."""
    q, qd = (torch.tensor(rng.normal(size=(4, 6))) for _ in range(2))
    qdd = torch.tensor(rng.normal(size=6), requires_grad=True)
    w = torch.tensor(rng.normal(size=(4, 6)))
    (sdt.inverse_dynamics(ur5, q, qd, qdd) * w).sum().backward()
    M = screwdyn.mass_matrix(ur5, q.numpy())
    np.testing.assert_allclose(qdd.grad.numpy(), np.einsum("kij,ki->j", M, w.numpy()), rtol=1e-10, atol=1e-14)


def test_a_floating_model_has_no_gradient_in_q(rng):
    m = models.load("solo12", floating_base=True)
    q = torch.tensor(screwdyn.random_configuration(m, rng=rng), requires_grad=True)
    tau = sdt.inverse_dynamics(m, q, torch.zeros(m.n, dtype=torch.float64), torch.zeros(m.n, dtype=torch.float64))
    with pytest.raises(screwdyn.InputError, match="one degree of freedom"):
        tau.sum().backward()
