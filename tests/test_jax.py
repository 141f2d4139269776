"""screwdyn.jax: custom_vjp gradients from the analytic derivatives against finite differences
(jax.test_util.check_grads), under jit and vmap."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp                      # noqa: E402
from jax.test_util import check_grads        # noqa: E402

import screwdyn                              # noqa: E402
import screwdyn.jax as sdj                   # noqa: E402
from screwdyn import models                  # noqa: E402


@pytest.fixture(scope="module")
def ur5():
    return models.load("ur5")


def _states(rng):
    return tuple(jnp.asarray(rng.normal(size=(3, 6))) for _ in range(3))


@pytest.mark.parametrize("name", ["inverse_dynamics", "forward_dynamics"])
def test_dynamics_gradients(ur5, rng, name):
    f = getattr(sdj, name)
    check_grads(lambda a, b, c: f(ur5, a, b, c), _states(rng), order=1, modes=["rev"])


@pytest.mark.parametrize("scheme", ["rk4", "semi_implicit_euler"])
def test_step_gradients(ur5, rng, scheme):
    check_grads(lambda a, b, c: sdj.step(ur5, a, b, c, 2e-3, scheme), _states(rng), order=1, modes=["rev"])


def test_jit_vmap_and_values(ur5, rng):
    q, qd, qdd = _states(rng)
    tau = jax.jit(lambda a, b, c: sdj.inverse_dynamics(ur5, a, b, c))(q, qd, qdd)
    assert np.array_equal(np.asarray(tau), screwdyn.inverse_dynamics(ur5, *map(np.asarray, (q, qd, qdd))))
    a = jax.vmap(lambda x: sdj.forward_dynamics(ur5, x, qd[0], qdd[0]))(q)
    np.testing.assert_array_equal(np.asarray(a), screwdyn.forward_dynamics(ur5, np.asarray(q), np.asarray(qd[0]),
                                                                           np.asarray(qdd[0])))
    g = jax.grad(lambda x: jnp.sum(sdj.inverse_dynamics(ur5, q, qd, x) ** 2))(qdd[0])   # broadcast: summed
    M = screwdyn.mass_matrix(ur5, np.asarray(q))
    tau0 = screwdyn.inverse_dynamics(ur5, np.asarray(q), np.asarray(qd), np.asarray(qdd[0]))
    np.testing.assert_allclose(np.asarray(g), np.einsum("kij,ki->j", M, 2 * tau0), rtol=1e-10)
