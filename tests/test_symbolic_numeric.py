"""screwdyn.symbolic on real robots: the closed forms, lambdified, against Pinocchio (an independent
library) and against screwdyn's compiled kernels, to 1e-10; generated C code; derivation time."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import time

import numpy as np
import pytest

import screwdyn
from screwdyn.symbolic import Dynamics, SymbolicModel, rnea
from screwdyn.symbolic.output import numpy_function

from helpers import random_model, to_pinocchio

pin = pytest.importorskip("pinocchio")

TOL = 1e-10


def urdf_path(name):
    from screwdyn.io.urdf import example_robot_data_path

    try:
        return str(example_robot_data_path(name))
    except (FileNotFoundError, KeyError):
        pytest.skip(f"example-robot-data has no {name}")


def pinocchio_reference(pm, q, qd, qdd):
    data = pm.createData()
    M = pin.crba(pm, data, q)
    M = np.triu(M) + np.triu(M, 1).T           # crba fills the upper triangle only
    C = pin.computeCoriolisMatrix(pm, data, q, qd).copy()
    g = pin.computeGeneralizedGravity(pm, data, q).copy()
    tau = pin.rnea(pm, data, q, qd, qdd).copy()
    return M, C, g, tau


def states(rng, n, count=4):
    for _ in range(count):
        yield rng.uniform(-np.pi, np.pi, n), rng.normal(size=n) * 2, rng.normal(size=n) * 3


@pytest.fixture(scope="module")
def ur5():
    path = urdf_path("ur5")
    dyn = Dynamics(SymbolicModel.from_urdf(path))
    f = dyn.lambdify(("M", "C", "g", "tau"))
    return screwdyn.load_urdf(path), pin.buildModelFromUrdf(path), dyn, f


def test_ur5_closed_form_matches_pinocchio(ur5, rng):
    model, pm, dyn, f = ur5
    assert dyn.parameters == []                  # numbers substituted: only q, qd, qdd remain
    for q, qd, qdd in states(rng, 6):
        ours = f(q, qd, qdd)
        for name, a, b in zip("M C g tau".split(), ours, pinocchio_reference(pm, q, qd, qdd)):
            np.testing.assert_allclose(a, b, atol=TOL, rtol=0, err_msg=name)


def test_ur5_closed_form_matches_screwdyn_kernels(ur5, rng):
    model, _, _, f = ur5
    for q, qd, qdd in states(rng, 6, count=3):
        M, C, g, tau = f(q, qd, qdd)
        np.testing.assert_allclose(M, screwdyn.mass_matrix(model, q), atol=TOL, rtol=0)
        np.testing.assert_allclose(C, screwdyn.coriolis_matrix(model, q, qd), atol=TOL, rtol=0)
        np.testing.assert_allclose(g, screwdyn.gravity_torques(model, q), atol=TOL, rtol=0)
        np.testing.assert_allclose(tau, screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True), atol=TOL, rtol=0)


def test_ur5_identities_numerically(ur5, rng):
    """Mdot - 2C skew and M symmetric positive definite, at random states (too long to simplify)."""
    _, _, dyn, _ = ur5
    Mdot = numpy_function(["q", "qd"], [list(dyn.q), list(dyn.qd)], [dyn.Mdot])
    f = dyn.lambdify(("M", "C"))
    for q, qd, _ in states(rng, 6, count=3):
        M, C = f(q, qd)
        (Md,) = Mdot(q, qd)
        N = Md - 2 * C
        np.testing.assert_allclose(N + N.T, 0, atol=TOL)
        np.testing.assert_allclose(M, M.T, atol=0)
        assert np.linalg.eigvalsh(M).min() > 0


def test_ur5_symbolic_masses(rng):
    path = urdf_path("ur5")
    model = screwdyn.load_urdf(path)
    sm = SymbolicModel.from_urdf(path, symbolic_masses=True)
    assert [str(p) for p in sm.parameters] == [f"m_{k}" for k in range(1, 7)]
    dyn = Dynamics(sm)
    f = dyn.lambdify(("M", "g"))
    pm = pin.buildModelFromUrdf(path)
    for q, qd, qdd in states(rng, 6, count=2):
        M, g = f(q, model.mass)
        Mp, _, gp, _ = pinocchio_reference(pm, q, qd, qdd)
        np.testing.assert_allclose(M, Mp, atol=TOL, rtol=0)
        np.testing.assert_allclose(g, gp, atol=TOL, rtol=0)


def test_ur5_symbolic_rnea_matches(ur5, rng):
    """The generic RNEA run on SymPy expressions, then compiled, equals Pinocchio's."""
    model, pm, dyn, _ = ur5
    tau = rnea(dyn.model, dyn.q, dyn.qd, dyn.qdd)
    f = numpy_function(["q", "qd", "qdd"], [list(dyn.q), list(dyn.qd), list(dyn.qdd)], [tau])
    for q, qd, qdd in states(rng, 6, count=2):
        np.testing.assert_allclose(f(q, qd, qdd)[0], pinocchio_reference(pm, q, qd, qdd)[3], atol=TOL, rtol=0)


def test_ur5_ccode_compiles_and_matches(ur5, rng, tmp_path):
    _, _, dyn, f = ur5
    src = dyn.ccode(("M", "g"), prefix="ur5")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "ur5.c").write_text(src)
    lib = tmp_path / "libur5.so"
    subprocess.run([cc, "-O0", "-shared", "-fPIC", "-std=c99", "-o", str(lib), str(tmp_path / "ur5.c"), "-lm"],
                   check=True)
    so = ctypes.CDLL(str(lib))
    ptr = lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))   # noqa: E731
    for q, qd, qdd in states(rng, 6, count=2):
        q = np.ascontiguousarray(q)
        M, g = np.zeros(36), np.zeros(6)
        so.ur5_M(ptr(q), ptr(M))
        so.ur5_g(ptr(q), ptr(g))
        Mf, _, gf, _ = f(q, qd, qdd)
        np.testing.assert_allclose(M.reshape(6, 6), Mf, atol=1e-12, rtol=0)
        np.testing.assert_allclose(g, gf, atol=1e-12, rtol=0)


def test_random_tree_against_pinocchio(rng):
    """A random tree with prismatic joints, arbitrary axes, merged fixed links, rotors and friction."""
    model = random_model(rng, n=4, fixed=1, prismatic=0.5, armature=True)
    pm = to_pinocchio(model)
    dyn = Dynamics(model)
    f = dyn.lambdify(("M", "C", "g", "tau"))
    for q, qd, qdd in states(rng, 4, count=3):
        M, C, g, tau = f(q, qd, qdd)
        Mp, Cp, gp, taup = pinocchio_reference(pm, q, qd, qdd)
        np.testing.assert_allclose(M, Mp, atol=TOL, rtol=0)
        np.testing.assert_allclose(C, Cp, atol=TOL, rtol=0)
        np.testing.assert_allclose(g, gp, atol=TOL, rtol=0)
        # Pinocchio has no joint friction: ours adds b qd + fc sign(qd)
        np.testing.assert_allclose(tau, taup + screwdyn.friction_torques(model, qd), atol=TOL, rtol=0)
        np.testing.assert_allclose(rnea(model, q, qd, qdd), tau, atol=TOL, rtol=0)


panda_mimic = pytest.mark.filterwarnings("ignore:robot 'panda'.*mimic")


@panda_mimic
def test_panda_generic_rnea_numpy_matches_pinocchio(rng):
    path = urdf_path("panda")
    model, pm = screwdyn.load_urdf(path), pin.buildModelFromUrdf(path)
    assert model.n == pm.nv == 9                 # seven arm joints and two fingers on one body: a tree
    for q, qd, qdd in states(rng, 9):
        taup = pinocchio_reference(pm, q, qd, qdd)[3]
        np.testing.assert_allclose(rnea(model, q, qd, qdd, joint_terms=False), taup, atol=TOL, rtol=0)
        # the URDF's joint damping, which Pinocchio's rnea leaves out
        np.testing.assert_allclose(rnea(model, q, qd, qdd), taup + model.damping * qd, atol=TOL, rtol=0)
        np.testing.assert_allclose(rnea(model, q, qd, qdd), screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True),
                                   atol=TOL, rtol=0)


@panda_mimic
def test_panda_mass_matrix_and_gravity_closed_form(rng):
    path = urdf_path("panda")
    pm = pin.buildModelFromUrdf(path)
    dyn = Dynamics(SymbolicModel.from_urdf(path))
    f = dyn.lambdify(("M", "g"))
    for q, qd, qdd in states(rng, 9, count=2):
        M, g = f(q)
        Mp, _, gp, _ = pinocchio_reference(pm, q, qd, qdd)
        np.testing.assert_allclose(M, Mp, atol=TOL, rtol=0)
        np.testing.assert_allclose(g, gp, atol=TOL, rtol=0)


@pytest.mark.slow
@panda_mimic
def test_panda_full_closed_form(rng):
    """Panda's full M, C, g (nine joints): about 30 s of derivation and compilation."""
    path = urdf_path("panda")
    pm = pin.buildModelFromUrdf(path)
    dyn = Dynamics(SymbolicModel.from_urdf(path))
    f = dyn.lambdify(("M", "C", "g"))
    for q, qd, qdd in states(rng, 9, count=2):
        M, C, g = f(q, qd)
        Mp, Cp, gp, _ = pinocchio_reference(pm, q, qd, qdd)
        np.testing.assert_allclose(M, Mp, atol=TOL, rtol=0)
        np.testing.assert_allclose(C, Cp, atol=TOL, rtol=0)
        np.testing.assert_allclose(g, gp, atol=TOL, rtol=0)


@pytest.mark.slow
def test_ur5_full_symbolic_derivation_time(capsys):
    """A full symbolic UR5 (M, C, g, then CSE) in under 60 s; prints the times and operation counts."""
    path = urdf_path("ur5")
    t0 = time.perf_counter()
    dyn = Dynamics(SymbolicModel.from_urdf(path))
    times = {}
    for name in ("M", "C", "g"):
        t = time.perf_counter()
        getattr(dyn, name)
        times[name] = time.perf_counter() - t
    result = dyn.cse(("M", "C", "g"))
    total = time.perf_counter() - t0
    with capsys.disabled():
        print(f"\nUR5 symbolic M, C, g + CSE: {total:.1f} s (M {times['M']:.1f} s, C {times['C']:.1f} s, "
              f"g {times['g']:.1f} s, CSE {result.seconds:.1f} s); count_ops {result.ops_before} -> "
              f"{result.ops_after} after CSE ({len(result.replacements)} subexpressions)")
    assert total < 60
    assert result.ops_after < result.ops_before / 20
