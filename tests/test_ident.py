"""Tests of screwdyn.ident: base parameters, excitation trajectories, least-squares estimation
(noise-free recovery, noise-level residuals, coverage of the reported standard deviations),
derivatives from positions, the physically consistent estimate, and the CSV files and
the `screwdyn identify` command (:func:`screwdyn.cli.ident_cli`) that reads them.

The robot is the UR5 of example-robot-data (friction added) where available, random trees
otherwise; data come from inverse dynamics along excitation trajectories (no simulator)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn.cli import ident_cli
from screwdyn.errors import InputError
from screwdyn.ident import (
    base_parameters, base_regressor, estimate_derivatives, excitation_trajectory, identify, read_csv, regressor,
    write_csv,
)
from screwdyn.inertia import box
from screwdyn.model_params import inertial_parameters, physical_consistency

from helpers import random_model, random_state

FRICTION = dict(viscous=True, coulomb=True)
DT = 0.01


def ur5_or_random():
    try:
        from screwdyn.io.urdf import example_robot_data_path, load_urdf

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_urdf(example_robot_data_path("ur5"))
    except (ImportError, FileNotFoundError):
        model = random_model(np.random.default_rng(5), n=6, fixed=1, prismatic=0.0, branching=0.0)
    return model.replace(damping=np.array([0.8, 0.8, 0.5, 0.2, 0.2, 0.1]),
                         friction=np.array([2.0, 2.0, 1.0, 0.5, 0.5, 0.3]))


@pytest.fixture(scope="module")
def setup():
    """UR5 with friction, its base parameters and two excitation trajectories (optimised; a second
    seed for validation), 20 s of noise-free data at 100 Hz along the first."""
    model = ur5_or_random()
    base = base_parameters(model, **FRICTION)
    traj = excitation_trajectory(model, base=base, harmonics=3, samples=30, maxiter=15, seed=0)
    other = excitation_trajectory(model, base=base, harmonics=3, samples=30, maxiter=0, seed=7)
    t = np.arange(0.0, 20.0, DT)
    q, qd, qdd = traj(t)
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True)
    return dict(model=model, base=base, traj=traj, other=other, t=t, q=q, qd=qd, qdd=qdd, tau=tau,
                beta=base.of_model(model))


def simple_pendulum(axis):
    b = screwdyn.ModelBuilder("pendulum")
    T = np.eye(4)
    T[:3, 3] = (0.1, 0.2, 0.3)
    body = box(1.5, 0.1, 0.2, 0.3).transformed(T)
    b.add_body("l", "base", "j", "revolute", axis=axis, inertial=body)
    return b.build()


# ---------------------------------------------------------------------------- base parameters
def test_base_parameters_of_a_single_joint():
    """About the vertical (gravity) axis only Izz + Ia acts; about a horizontal x axis also the
    first moments normal to the axis (gravity), h_y and h_z."""
    vertical = base_parameters(simple_pendulum((0, 0, 1)), armature=True)
    assert vertical.names == ("Izz_l + Ia_j",)
    assert list(vertical.unidentifiable) == list(range(9))
    horizontal = base_parameters(simple_pendulum((1, 0, 0)), armature=True)
    assert horizontal.names == ("mcy_l", "mcz_l", "Ixx_l + Ia_j")
    # K comes from a least-squares fit on sampled regressors: exact to rounding
    np.testing.assert_allclose(horizontal.K[2], np.eye(11)[4] + np.eye(11)[10], rtol=0, atol=1e-12)


@pytest.mark.parametrize("which", ["ur5", "random"])
def test_base_regressor_spans_the_full_one(which, rng):
    """On fresh states: Y = Y_b K (so Y pi = Y_b beta), Y_b has full column rank, and the rank
    of Y equals the number of base parameters."""
    if which == "ur5":
        model = ur5_or_random()
        flags = FRICTION
    else:
        model = random_model(rng, n=7, fixed=2, prismatic=0.3, armature=True)
        flags = dict(armature=True, **FRICTION)
    base = base_parameters(model, **flags)
    q, qd, qdd = random_state(rng, model.n, batch=(200,))
    Y = regressor(model, q, qd, qdd, **flags)
    Yb = base_regressor(model, q, qd, qdd, base=base)
    np.testing.assert_allclose(Yb @ base.K, Y, rtol=0, atol=1e-10 * np.abs(Y).max())
    pi = inertial_parameters(model, **flags)
    np.testing.assert_allclose(Yb @ base.from_full(pi), screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True),
                               rtol=0, atol=1e-9)
    s = np.linalg.svd(Y.reshape(-1, Y.shape[-1]), compute_uv=False)
    assert np.sum(s > 1e-9 * s[0]) == base.rank
    sb = np.linalg.svd(Yb.reshape(-1, base.rank), compute_uv=False)
    assert sb[-1] > 1e-6 * sb[0]
    np.testing.assert_array_equal(base.K[:, base.independent], np.eye(base.rank))
    assert np.all(Y[..., base.unidentifiable] == 0)
    if which == "ur5" and model.name == "ur5":
        assert base.rank == 36 + 12   # the 6R arm's 36 inertial base parameters, plus friction


def test_base_parameters_do_not_depend_on_the_samples():
    model = ur5_or_random()
    a = base_parameters(model, seed=0)
    b = base_parameters(model, seed=11, samples=80)
    assert a is base_parameters(model, seed=0)        # cached
    np.testing.assert_array_equal(a.independent, b.independent)
    np.testing.assert_allclose(a.K, b.K, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------- excitation
def test_excitation_trajectory(setup):
    model, traj, base = setup["model"], setup["traj"], setup["base"]
    t = np.linspace(0.0, traj.period, 2001)
    q, qd, qdd = traj(t)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    assert np.all(q >= lo) and np.all(q <= hi)
    vmax = np.where(np.isfinite(model.velocity_limit), model.velocity_limit, np.inf)
    assert np.all(np.abs(qd) <= 1.02 * vmax)                 # constrained at the samples
    np.testing.assert_allclose(q[0], q[-1], atol=1e-12)       # periodic
    np.testing.assert_allclose(np.gradient(q, t, axis=0)[1:-1], qd[1:-1], atol=2e-3 * np.abs(qd).max())
    np.testing.assert_allclose(np.gradient(qd, t, axis=0)[1:-1], qdd[1:-1], atol=2e-3 * np.abs(qdd).max())
    q1, qd1, qdd1 = traj(1.25)
    np.testing.assert_allclose(np.concatenate([q1, qd1, qdd1]), np.concatenate([a[0] for a in traj([1.25])]))
    start = excitation_trajectory(model, base=base, harmonics=3, samples=30, maxiter=0, seed=0)
    assert traj.cond < 0.8 * start.cond                     # the optimiser improved the random start
    Yb = base_regressor(model, *traj(np.arange(30) * traj.period / 30), base=base).reshape(-1, base.rank)
    np.testing.assert_allclose(np.linalg.cond(Yb), traj.cond, rtol=1e-8)


# ---------------------------------------------------------------------------- estimation
def test_noise_free_data_recover_the_base_parameters(setup):
    s = setup
    est = identify(s["model"], s["q"], s["qd"], s["qdd"], s["tau"], base=s["base"])
    err = est.beta - s["beta"]
    assert np.linalg.norm(err) <= 1e-8 * np.linalg.norm(s["beta"])
    assert np.all(np.abs(err) <= 1e-8 * np.abs(s["beta"]) + 1e-12 * np.linalg.norm(s["beta"]))
    assert est.rms.max() < 1e-9
    # physically consistent estimate on consistent data: the same base parameters
    phys = est.physical()
    assert phys.consistent and np.all(phys.margins >= 0)
    np.testing.assert_allclose(phys.beta, s["beta"], rtol=0, atol=1e-6 * np.linalg.norm(s["beta"]))


def test_noise_free_recovery_random_tree_with_armature(rng):
    model = random_model(rng, n=6, fixed=1, prismatic=0.3, armature=True)
    flags = dict(armature=True, **FRICTION)
    base = base_parameters(model, **flags)
    traj = excitation_trajectory(model, base=base, harmonics=3, samples=30, maxiter=5)
    q, qd, qdd = traj(np.arange(0.0, 10.0, DT))
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True)
    est = identify(model, q, qd, qdd, tau, base=base)
    beta = base.of_model(model)
    assert np.linalg.norm(est.beta - beta) <= 1e-8 * np.linalg.norm(beta)


def test_noise_level_residuals_and_coverage(setup):
    """Torque noise sigma_j: the fit's residual and the validation error on another trajectory
    are at the noise level, and ~95 % of the parameters lie within 2 reported std's of the truth."""
    s = setup
    model, base = s["model"], s["base"]
    sigma = np.array([1.0, 1.0, 0.5, 0.2, 0.2, 0.1])
    rng = np.random.default_rng(1)
    qv, qdv, qddv = s["other"](s["t"])
    tau_v = screwdyn.inverse_dynamics(model, qv, qdv, qddv, friction=True)
    z = []
    for _ in range(8):
        est = identify(model, s["q"], s["qd"], s["qdd"], s["tau"] + sigma * rng.normal(size=s["tau"].shape),
                       base=base, weights="joint")
        assert est.method == "wls"
        np.testing.assert_allclose(est.sigma, sigma, rtol=0.1)
        measured_v = tau_v + sigma * rng.normal(size=tau_v.shape)
        rms_v = np.sqrt(np.mean((est.predict(qv, qdv, qddv) - measured_v) ** 2, axis=0))
        np.testing.assert_allclose(rms_v, sigma, rtol=0.1)
        z.append((est.beta - s["beta"]) / est.std)
    z = np.concatenate(z)
    coverage = np.mean(np.abs(z) < 2)
    assert 0.9 <= coverage <= 0.99, coverage
    assert 0.7 < np.mean(z**2) < 1.3


def test_weighted_least_squares_is_more_precise_with_unequal_noise(setup):
    s = setup
    sigma = np.array([2.0, 2.0, 0.05, 0.05, 0.05, 0.05])
    noisy = s["tau"] + sigma * np.random.default_rng(2).normal(size=s["tau"].shape)
    ols = identify(s["model"], s["q"], s["qd"], s["qdd"], noisy, base=s["base"])
    wls = identify(s["model"], s["q"], s["qd"], s["qdd"], noisy, base=s["base"], weights="joint")
    given = identify(s["model"], s["q"], s["qd"], s["qdd"], noisy, base=s["base"], weights=1 / sigma**2)
    assert ols.method == "ols" and wls.method == "wls"
    assert np.median(wls.std / ols.std) < 0.5
    np.testing.assert_allclose(given.std, wls.std, rtol=0.1)
    err_ols = np.abs(ols.beta - s["beta"]) / ols.std
    err_wls = np.abs(wls.beta - s["beta"]) / wls.std
    assert np.mean(err_ols < 2) > 0.85 and np.mean(err_wls < 2) > 0.85


def test_savitzky_golay_derivatives():
    """Exact to the filter's bias on a smooth signal away from the ends (identify trims them)."""
    t = np.arange(0.0, 4.0, DT)
    q = np.stack([np.sin(2.0 * t), np.cos(0.7 * t)], axis=1)
    qf, qd, qdd = estimate_derivatives(q, DT)
    inner = slice(10, -10)  # half the default window (0.2 s)
    np.testing.assert_allclose(qf[inner], q[inner], atol=1e-6)
    np.testing.assert_allclose(qd[inner], np.stack([2 * np.cos(2 * t), -0.7 * np.sin(0.7 * t)], axis=1)[inner],
                               atol=1e-4)
    np.testing.assert_allclose(qdd[inner], np.stack([-4 * np.sin(2 * t), -0.49 * np.cos(0.7 * t)], axis=1)[inner],
                               atol=2e-3)
    with pytest.raises(InputError, match="longer than the data"):
        estimate_derivatives(q[:15], DT)


def test_identify_from_noisy_positions_only(setup):
    """qd and qdd estimated from encoder-noisy positions: validation error stays near the torque noise."""
    s = setup
    model = s["model"]
    rng = np.random.default_rng(3)
    sigma = 0.5
    q_meas = s["q"] + 1e-4 * rng.normal(size=s["q"].shape)
    tau_meas = s["tau"] + sigma * rng.normal(size=s["tau"].shape)
    est = identify(model, q_meas, None, None, tau_meas, t=s["t"], base=s["base"])
    assert est.q.shape[0] == len(s["t"]) - 2 * 10 and est.t[0] == s["t"][10]
    qv, qdv, qddv = s["other"](s["t"])
    tau_v = screwdyn.inverse_dynamics(model, qv, qdv, qddv, friction=True)
    rms_v = np.sqrt(np.mean((est.predict(qv, qdv, qddv) - tau_v - sigma * rng.normal(size=tau_v.shape)) ** 2))
    assert rms_v < 1.1 * sigma
    # leaving out the instants near velocity reversals (uncertain Coulomb sign) brings the fit
    # residual itself to the noise level on every joint
    slow = identify(model, q_meas, None, None, tau_meas, t=s["t"], base=s["base"], min_speed=0.05)
    np.testing.assert_allclose(slow.rms, sigma, rtol=0.06)
    assert slow.rms.max() <= est.rms.max()


def test_physically_consistent_estimate_from_poor_data(setup):
    """Few samples and heavy noise: the least-squares parameters are not physical; the
    constrained estimate is, fits almost as well, and lies nearer the truth."""
    s = setup
    rng = np.random.default_rng(4)
    sl = slice(0, None, 25)
    noisy = s["tau"][sl] + 5.0 * rng.normal(size=s["tau"][sl].shape)
    est = identify(s["model"], s["q"][sl], s["qd"][sl], s["qdd"][sl], noisy, base=s["base"])
    assert not est.consistency()[0]
    phys = est.physical()
    assert phys.consistent
    assert physical_consistency(phys.model, inertial_parameters(phys.model, **FRICTION), **FRICTION)[0]
    assert 1.0 <= phys.cost_ratio < 1.5
    np.testing.assert_allclose(phys.beta, s["base"].from_full(phys.pi))
    truth = s["beta"]
    assert np.linalg.norm(phys.beta - truth) < np.linalg.norm(est.beta - truth)


def test_physical_estimate_with_a_poor_prior(setup):
    """The prior (the CAD model) without friction and with 30 % wrong masses: on well-excited data
    the consistent estimate still fits as well as least squares and recovers the truth."""
    s = setup
    model = s["model"]
    rng = np.random.default_rng(6)
    sigma = np.array([1.0, 1.0, 0.5, 0.2, 0.2, 0.1])
    est = identify(model, s["q"], s["qd"], s["qdd"], s["tau"] + sigma * rng.normal(size=s["tau"].shape),
                   base=s["base"], weights="joint")
    prior = inertial_parameters(model, **FRICTION)
    prior[:10 * model.n] *= np.repeat(rng.uniform(0.7, 1.3, model.n), 10)   # scaled bodies stay physical
    prior[10 * model.n:] = 0.0
    phys = est.physical(prior=prior)
    assert phys.consistent and phys.cost_ratio < 1.01
    assert np.all(np.abs(phys.beta - s["beta"]) < 4 * est.std)
    with pytest.raises(InputError, match="prior"):
        est.physical(prior=prior[:-1])


def test_identify_input_errors(setup):
    s = setup
    m, q, tau = s["model"], s["q"], s["tau"]
    with pytest.raises(InputError, match="tau must have shape"):
        identify(m, q, s["qd"], s["qdd"], tau[:10])
    with pytest.raises(InputError, match="both qd and qdd"):
        identify(m, q, s["qd"], None, tau)
    with pytest.raises(InputError, match="sample times"):
        identify(m, q, None, None, tau)
    with pytest.raises(InputError, match="uniformly sampled"):
        identify(m, q, None, None, tau, t=s["t"] ** 2)
    with pytest.raises(InputError, match="too few"):
        identify(m, q[:3], s["qd"][:3], s["qdd"][:3], tau[:3], base=s["base"])
    with pytest.raises(InputError, match="weights"):
        identify(m, q, s["qd"], s["qdd"], tau, weights="robust")


# ---------------------------------------------------------------------------- CSV and CLI
def test_cli_identifies_from_a_csv_file(setup, tmp_path, capsys):
    s = setup
    if s["model"].name != "ur5":
        pytest.skip("example-robot-data is not installed")
    rng = np.random.default_rng(5)
    n_keep = 1000
    path = tmp_path / "data.csv"
    write_csv(path, s["model"], s["t"][:n_keep], s["q"][:n_keep],
              s["tau"][:n_keep] + 0.1 * rng.normal(size=(n_keep, 6)))
    d = read_csv(path, s["model"])
    assert set(d) == {"t", "q", "tau"} and d["q"].shape == (n_keep, 6)
    out_json, out_png = tmp_path / "r.json", tmp_path / "fit.png"
    code = ident_cli([str(path), "--model", "ur5", "--friction", "--wls", "--physical", "--json", str(out_json),
                      "--plot", str(out_png)])
    assert code == 0
    text = capsys.readouterr().out
    assert "48 base parameters" in text and "physically consistent" in text
    r = json.loads(out_json.read_text())
    assert len(r["beta"]) == len(r["names"]) == 48 and len(r["physical_pi"]) == 72
    assert np.max(r["rms"]) < 0.3
    assert out_png.stat().st_size > 10_000
    # a file without the torque columns is refused with the format in the message
    bad = tmp_path / "bad.csv"
    write_csv(bad, s["model"], s["t"][:50], s["q"][:50], s["tau"][:50])
    bad.write_text(bad.read_text().replace("tau_elbow_joint", "torque_elbow"))
    assert ident_cli([str(bad), "--model", "ur5"]) == 2
    assert "tau_<joint> missing for joints ['elbow_joint']" in capsys.readouterr().err


def test_example_runs(tmp_path, capsys):
    """examples/identification.py end to end, shortened: validation error at the noise level."""
    import runpy
    from pathlib import Path

    if ur5_or_random().name != "ur5":
        pytest.skip("example-robot-data is not installed")
    example = Path(__file__).resolve().parents[1] / "examples" / "identification.py"
    main = runpy.run_path(str(example))["main"]
    png, csv = tmp_path / "val.png", tmp_path / "data.csv"
    est, ratio = main(["--plot", str(png), "--csv", str(csv), "--seconds", "8", "--rate", "100", "--harmonics", "3",
                       "--iterations", "5"])
    assert np.all(np.abs(ratio - 1) < 0.15), ratio
    assert png.stat().st_size > 10_000 and csv.stat().st_size > 0
    assert "screwdyn identify" in capsys.readouterr().out
