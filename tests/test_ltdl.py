"""The sparse L^T D L factorization of M and its uses: M^{-1} against Pinocchio's
``computeMinverse`` and against numpy, the solve, no fill-in on branching trees."""
import warnings

import numpy as np
import pytest

import screwdyn
from helpers import kernel_jit, random_model, random_state, to_pinocchio
from screwdyn.algorithms import ltdl
from screwdyn.io.urdf import example_robot_data_path

pin = pytest.importorskip("pinocchio")


# The factor's pieces are compiled only into the entry points that call them: called from functions of ours.
@kernel_jit
def _factor(kd, H):
    n = H.shape[0]
    par, first, last = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    ltdl.branch_columns(kd, par, first, last)
    return par, ltdl.ltdl_factor(par, H)


@kernel_jit
def _solve(par, H, x):
    ltdl.ltdl_solve(par, H, x)


@kernel_jit
def _inverse_times(last, X, R, out):
    return ltdl.inverse_times(last, X, R, out)


@pytest.mark.parametrize("seed", range(6))
def test_mass_matrix_inverse_matches_pinocchio(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 14)), fixed=int(rng.integers(0, 3)), armature=True)
    pm = to_pinocchio(model)
    q, _, _ = random_state(rng, model.n)
    ref = pin.computeMinverse(pm, pm.createData(), q)
    ref = np.triu(ref) + np.triu(ref, 1).T           # Pinocchio fills the upper triangle
    Mi = screwdyn.mass_matrix_inverse(model, q)
    assert np.allclose(Mi, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    assert np.array_equal(Mi, Mi.T)
    assert np.allclose(Mi @ screwdyn.mass_matrix(model, q), np.eye(model.n), atol=1e-9)


@pytest.mark.parametrize("name", ["panda", "talos_full_v2"])
def test_mass_matrix_inverse_matches_pinocchio_on_real_robots(name, rng):
    path = example_robot_data_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = screwdyn.load_urdf(path)
    pm = pin.buildModelFromUrdf(str(path))
    idx = np.array([pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names])
    q = rng.uniform(-np.pi, np.pi, model.n)
    qp = np.empty(model.n)
    qp[idx] = q
    ref = pin.computeMinverse(pm, pm.createData(), qp)
    ref = (np.triu(ref) + np.triu(ref, 1).T)[np.ix_(idx, idx)]
    Mi = screwdyn.mass_matrix_inverse(model, q)
    assert np.allclose(Mi, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_factor_has_no_fill_in_and_reproduces_m(rng):
    model = random_model(rng, n=10, branching=0.8, armature=True)
    q, _, _ = random_state(rng, model.n)
    M = screwdyn.mass_matrix(model, q)
    H = M.copy()
    par, code = _factor(model._kd, H)
    assert code == 0
    L = np.tril(H, -1) + np.eye(model.n)
    D = np.diag(np.diag(H))
    assert np.allclose(L.T @ D @ L, M, rtol=1e-12, atol=1e-12 * np.abs(M).max())
    assert np.all(L[M == 0] == 0)                      # branch-induced sparsity: zeros stay zeros
    b = rng.normal(size=model.n)
    x = b.copy()
    _solve(par, H, x)
    assert np.allclose(M @ x, b, atol=1e-10)


def test_batch_matches_single_calls(rng):
    model = random_model(rng, n=5, armature=True)
    Q, _, _ = random_state(rng, model.n, (4,))
    Mi = screwdyn.mass_matrix_inverse(model, Q)
    assert Mi.shape == (4, model.n, model.n)
    for k in range(4):
        assert np.array_equal(Mi[k], screwdyn.mass_matrix_inverse(model, Q[k]))


def test_inverse_times_works_on_blocks_of_whole_trees():
    """``ltdl.inverse_times``: ``R = -X R`` by BLAS products over blocks of whole trees, on a forest
    whose trees' indices interleave (roots 0 and 1, with children 2 and 3: one block 0..3) beside
    a tree of its own (4..5): numpy's product, zero outside the blocks (``out`` holding NaN before)."""
    par = np.array([-1, -1, 0, 1, -1, 4])
    last = np.array([2, 3, 2, 3, 5, 5])   # as ltdl.branch_columns gives them
    on_branch = np.zeros((6, 6), dtype=bool)   # (a, b) on one tree
    for a in range(6):
        for b in range(6):
            ra, rb = a, b
            while par[ra] >= 0:
                ra = par[ra]
            while par[rb] >= 0:
                rb = par[rb]
            on_branch[a, b] = ra == rb
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 6))
    X = np.where(on_branch, X + X.T, 0.0)
    R = np.where(on_branch, rng.normal(size=(6, 6)), 0.0)
    expected = -X @ R
    out = np.full((6, 6), np.nan)
    assert _inverse_times(last, X, R, out) == 0
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)
    assert np.all(out[~on_branch] == 0.0)
