"""Tests of the torque regressor (screwdyn.algorithms.regressor, screwdyn.ident.regressor):
Y pi equals the RNEA's torques, its columns are the torques' derivatives in each parameter,
it agrees with Pinocchio's computeJointTorqueRegressor up to the documented parameter order,
and the entry point batches and checks its arguments as the other dynamics functions do."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError
from screwdyn.ident import regressor
from screwdyn.model_params import (
    PINOCCHIO_ORDER, inertial_parameters, parameter_names, with_inertial_parameters,
)

from helpers import random_model, random_state, to_pinocchio

ALL = dict(armature=True, viscous=True, coulomb=True)


def load_robot(name):
    from screwdyn.io.urdf import example_robot_data_path, load_urdf

    try:
        path = example_robot_data_path(name)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_urdf(path)


def with_drives(model, rng):
    """``model`` with random rotor inertias, gear ratios and friction on every joint."""
    n = model.n
    return model.replace(rotor_inertia=rng.uniform(1e-5, 1e-3, n), gear_ratio=rng.uniform(1, 100, n),
                         damping=rng.uniform(0, 1, n), friction=rng.uniform(0, 1, n))


def tau_of(model, q, qd, qdd):
    return screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True)


# ---------------------------------------------------------------------------- Y pi = RNEA
@pytest.mark.parametrize("seed", range(4))
def test_regressor_times_parameters_is_inverse_dynamics_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=8, fixed=2, prismatic=0.3, branching=0.5, armature=True)
    q, qd, qdd = random_state(rng, model.n)
    Y = regressor(model, q, qd, qdd, **ALL)
    pi = inertial_parameters(model, **ALL)
    assert Y.shape == (model.n, 13 * model.n)
    np.testing.assert_allclose(Y @ pi, tau_of(model, q, qd, qdd), rtol=0, atol=1e-10)
    # without extras: the rigid-body part, armature still in inverse_dynamics -> add it back
    Y0 = regressor(model, q, qd, qdd)
    np.testing.assert_allclose(Y0 @ inertial_parameters(model) + model.armature * qdd,
                               screwdyn.inverse_dynamics(model, q, qd, qdd), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["ur5", "panda"])
def test_regressor_times_parameters_is_inverse_dynamics_real_robots(name, rng):
    model = with_drives(load_robot(name), rng)
    q, qd, qdd = random_state(rng, model.n, batch=(20,))
    Y = regressor(model, q, qd, qdd, **ALL)
    pi = inertial_parameters(model, **ALL)
    tau = tau_of(model, q, qd, qdd)
    np.testing.assert_allclose(np.einsum("bij,j->bi", Y, pi), tau, rtol=0, atol=1e-10 * max(1.0, np.abs(tau).max()))


def test_non_unit_joint_scale(rng):
    """Screw axes with |omega| != 1 (Model.from_screws) go through S_i = s (a, 0) in both algorithms."""
    model = random_model(rng, n=5, fixed=0, prismatic=0.4)
    model = model.replace(joint_scale=rng.uniform(0.5, 2.0, model.n))
    q, qd, qdd = random_state(rng, model.n)
    np.testing.assert_allclose(regressor(model, q, qd, qdd) @ inertial_parameters(model),
                               screwdyn.inverse_dynamics(model, q, qd, qdd), rtol=0, atol=1e-10)


def test_columns_are_derivatives_in_each_parameter(rng):
    """tau is linear in pi, so column k of Y is ID(pi + e_k) - ID(pi) for any state."""
    model = random_model(rng, n=4, fixed=1)
    q, qd, qdd = random_state(rng, model.n)
    pi = inertial_parameters(model, **ALL)
    Y = regressor(model, q, qd, qdd, **ALL)
    tau0 = tau_of(model, q, qd, qdd)
    for k in range(len(pi)):
        moved = with_inertial_parameters(model, pi + np.eye(len(pi))[k], **ALL)
        np.testing.assert_allclose(tau_of(moved, q, qd, qdd) - tau0, Y[:, k], rtol=0, atol=1e-9,
                                   err_msg=parameter_names(model, **ALL)[k])


def test_only_ancestors_feel_a_body(rng):
    """Y[j, block of body i] = 0 unless joint j lies on the path from body i to the base."""
    model = random_model(rng, n=9, fixed=0, branching=0.8)
    q, qd, qdd = random_state(rng, model.n)
    Y = regressor(model, q, qd, qdd).reshape(model.n, model.n, 10)
    for i in range(model.n):
        path, j = set(), i
        while j >= 0:
            path.add(j)
            j = model.parent[j]
        others = [j for j in range(model.n) if j not in path]
        assert np.all(Y[others, i] == 0)
        assert np.abs(Y[i, i]).max() > 0


def test_static_regressor_is_gravity_only(rng):
    """At rest only the first moments and masses act (gravity): inertia columns vanish."""
    model = random_model(rng, n=6)
    q = random_state(rng, model.n)[0]
    Y = regressor(model, q, np.zeros(model.n), np.zeros(model.n)).reshape(model.n, model.n, 10)
    assert np.all(Y[:, :, 4:] == 0)
    Yg = regressor(model.with_gravity([0, 0, 0]), q, np.zeros(model.n), np.zeros(model.n))
    assert np.all(Yg == 0)


# ---------------------------------------------------------------------------- Pinocchio
def pin_order(n):
    return (10 * np.arange(n)[:, None] + PINOCCHIO_ORDER).ravel()


@pytest.mark.parametrize("seed", range(3))
def test_matches_pinocchio_random_trees(seed):
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(100 + seed)
    model = random_model(rng, n=7, fixed=2, prismatic=0.3)
    pm = to_pinocchio(model)
    data = pm.createData()
    for _ in range(5):
        q, qd, qdd = random_state(rng, model.n)
        Yp = pin.computeJointTorqueRegressor(pm, data, q, qd, qdd)
        np.testing.assert_allclose(regressor(model, q, qd, qdd)[:, pin_order(model.n)], Yp, rtol=0, atol=1e-10)
    # and Pinocchio's own parameter vectors are ours permuted
    pi_pin = np.concatenate([pm.inertias[i + 1].toDynamicParameters() for i in range(model.n)])
    np.testing.assert_allclose(inertial_parameters(model)[pin_order(model.n)], pi_pin, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["ur5", "panda"])
def test_matches_pinocchio_real_robots(name, rng):
    pin = pytest.importorskip("pinocchio")
    model = load_robot(name)
    pm = to_pinocchio(model)
    data = pm.createData()
    q, qd, qdd = random_state(rng, model.n)
    Yp = pin.computeJointTorqueRegressor(pm, data, q, qd, qdd)
    np.testing.assert_allclose(regressor(model, q, qd, qdd)[:, pin_order(model.n)], Yp, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------- entry point
def test_batches_broadcast_and_match_single_states(rng):
    model = random_model(rng, n=5)
    q, qd, qdd = random_state(rng, model.n, batch=(3, 4))
    Y = regressor(model, q, qd, qdd, viscous=True)
    assert Y.shape == (3, 4, 5, 55)
    for idx in np.ndindex(3, 4):
        np.testing.assert_array_equal(Y[idx], regressor(model, q[idx], qd[idx], qdd[idx], viscous=True))
    Yb = regressor(model, q[0, 0], qd, qdd[0, 0])  # broadcast one q against a batch of qd
    np.testing.assert_array_equal(Yb[1, 2], regressor(model, q[0, 0], qd[1, 2], qdd[0, 0]))
    out = np.empty((3, 4, 5, 50))
    assert regressor(model, q, qd, qdd, out=out) is out
    np.testing.assert_array_equal(out, Y[..., :50])


def test_bad_arguments_name_themselves(rng):
    model = random_model(rng, n=3)
    q, qd, qdd = random_state(rng, model.n)
    with pytest.raises(InputError, match="qd"):
        regressor(model, q, qd[:2], qdd)
    bad = qdd.copy()
    bad[1] = np.nan
    with pytest.raises(InputError, match="qdd contains NaN"):
        regressor(model, q, qd, bad)
    with pytest.raises(InputError, match=r"q contains NaN or inf \(batch index \(1,\)\)"):
        regressor(model, np.stack([q, q * np.inf]), qd, qdd)
    with pytest.raises(InputError, match="out"):
        regressor(model, q, qd, qdd, out=np.empty((3, 31)))
    with pytest.raises(InputError, match="model"):
        regressor("ur5", q, qd, qdd)
