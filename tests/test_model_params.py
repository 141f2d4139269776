"""Tests of screwdyn.model_params: the parameter vector pi, its round trip through a model,
and the pseudo-inertia test of physical consistency."""
from __future__ import annotations

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError, ModelError
from screwdyn.inertia import point_mass
from screwdyn.model_params import (
    inertial_parameters, parameter_names, parameters_from_pseudo_inertia, physical_consistency, pseudo_inertia,
    with_inertial_parameters,
)

from helpers import random_model, random_state

ALL = dict(armature=True, viscous=True, coulomb=True)


def test_layout_matches_the_packed_kernel_array(rng):
    """pi per body is exactly the kd columns MASS, MCOM, IORG (the kernels' own parameters)."""
    from screwdyn.algorithms.layout import IORG, MASS

    model = random_model(rng, n=6, armature=True)
    pi = inertial_parameters(model, **ALL)
    np.testing.assert_array_equal(pi[:60].reshape(6, 10), model._kd[:6, MASS:IORG + 6])
    np.testing.assert_array_equal(pi[60:66], model.armature)
    np.testing.assert_array_equal(pi[66:72], model.damping)
    np.testing.assert_array_equal(pi[72:], model.friction)
    names = parameter_names(model, **ALL)
    assert len(names) == len(pi)
    assert names[:10] == [f"{p}_{model.link_names[0]}" for p in ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Ixz",
                                                                  "Iyy", "Iyz", "Izz")]
    assert names[60] == f"Ia_{model.joint_names[0]}" and names[-1] == f"fc_{model.joint_names[-1]}"


def test_point_mass_parameters():
    """A point mass m at c: h = m c, I_o = m (|c|^2 1 - c c^T)."""
    b = screwdyn.ModelBuilder("pm")
    b.add_body("l", "base", "j", "revolute", inertial=point_mass(2.0, [0.1, -0.2, 0.3]))
    pi = inertial_parameters(b.build())
    c = np.array([0.1, -0.2, 0.3])
    I = 2.0 * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(pi, [2.0, *(2 * c), I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]], atol=1e-15)


def test_round_trip_through_a_model(rng):
    model = random_model(rng, n=6, armature=True)
    pi = inertial_parameters(model, **ALL)
    pi2 = pi * rng.uniform(0.5, 1.5, pi.shape)
    moved = with_inertial_parameters(model, pi2, **ALL)
    np.testing.assert_allclose(inertial_parameters(moved, **ALL), pi2, rtol=1e-12, atol=1e-14)
    q, qd, qdd = random_state(rng, model.n)
    same = with_inertial_parameters(model, pi, **ALL)
    np.testing.assert_allclose(screwdyn.inverse_dynamics(same, q, qd, qdd, friction=True),
                               screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True), rtol=0, atol=1e-11)


def test_round_trip_errors(rng):
    model = random_model(rng, n=3)
    pi = inertial_parameters(model)
    with pytest.raises(InputError, match=r"shape \(33,\)"):
        with_inertial_parameters(model, pi, armature=True)
    bad = pi.copy()
    bad[0] = 0.0
    with pytest.raises(ModelError, match="zero mass"):
        with_inertial_parameters(model, bad)
    bad[0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        with_inertial_parameters(model, bad)


def test_pseudo_inertia_is_the_second_moment(rng):
    """J = sum of m_k [r_k; 1][r_k; 1]^T for point masses, and PSD for every rigid body."""
    pts, ms = rng.normal(size=(5, 3)), rng.uniform(0.1, 2, 5)
    bodies = [point_mass(m, r) for m, r in zip(ms, pts)]
    body = bodies[0]
    for other in bodies[1:]:
        body = body + other
    b = screwdyn.ModelBuilder("cloud")
    b.add_body("l", "base", "j", "revolute", inertial=body)
    J = pseudo_inertia(inertial_parameters(b.build()))
    expected = sum(m * np.outer(np.append(r, 1), np.append(r, 1)) for m, r in zip(ms, pts))
    np.testing.assert_allclose(J, expected, atol=1e-12)
    np.testing.assert_allclose(parameters_from_pseudo_inertia(J), inertial_parameters(b.build()), atol=1e-12)
    model = random_model(rng, n=7, fixed=3)
    ok, margins = physical_consistency(model, inertial_parameters(model))
    assert ok and np.all(margins > 0)


def test_inconsistent_parameters_are_flagged(rng):
    model = random_model(rng, n=3)
    pi = inertial_parameters(model, viscous=True)
    # principal moments breaking the triangle inequality at the CoM: Izz > Ixx + Iyy
    bad = pi.copy()
    m, h = bad[10], bad[11:14]
    c = h / m
    Ic = np.diag([0.01, 0.01, 0.05])
    Io = Ic + m * (c @ c * np.eye(3) - np.outer(c, c))
    bad[14:20] = Io[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
    ok, margins = physical_consistency(model, bad, viscous=True)
    assert not ok and margins[1] < 0 and margins[0] > 0 and margins[2] > 0
    neg = pi.copy()
    neg[30] = -0.1  # negative viscous friction on joint 0
    ok, margins = physical_consistency(model, neg, viscous=True)
    assert not ok and margins[3] < 0
    # a physical body with a tiny mass error: negative mass is inconsistent
    light = pi.copy()
    light[0] = -1e-3
    assert not physical_consistency(model, light, viscous=True)[0]
    assert physical_consistency(model, pi, viscous=True)[0]
