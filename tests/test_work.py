"""What every kernel does around its arithmetic (src/screwdyn/algorithms/work.py) and how
screwdyn.dispatch calls it: one state is the batch of one (the same numbers), work on the stack up to
STACK_LIMIT floats (beyond: one lane, or a thread with a stack made for the model), the fast paths'
layouts, and the batch drivers' dynamic scheduling."""
import numpy as np
import pytest

import screwdyn
from screwdyn.algorithms import work
from helpers import kernel_jit, random_model, random_state


@pytest.mark.parametrize("n", [5, 70, 700])
def test_single_state_matches_batch_on_both_sides_of_the_stack_limit(rng, n):
    """5 bodies: LANES lanes; 70: fewer (LANES lanes of work do not fit the stack: the most of LANES / 2,
    LANES / 4, ..., 4 that do); 700: one lane (four do not fit; two are not compiled), and not even one lane
    of the mass matrix fits, which runs on a thread with a large stack. A state alone and in a batch give the same numbers in each case."""
    from screwdyn.dynamics import _ABA, _CORIOLIS, _CRBA, _RNEA

    model = random_model(rng, n=n, fixed=3, branching=0.3)
    expected = {5: (_RNEA.entry.lanes, _CRBA.entry.lanes, _ABA.entry.lanes, _CORIOLIS.entry.lanes),
                70: (16, 8, 8, 4), 700: (1, 0, 1, 0)}[n]
    assert tuple(k.lanes(model.n) for k in (_RNEA, _CRBA, _ABA, _CORIOLIS)) == expected
    Q, QD, QDD = random_state(rng, model.n, (2,))
    for f, args in [(screwdyn.inverse_dynamics, (Q, QD, QDD)), (screwdyn.mass_matrix, (Q,)),
                    (screwdyn.forward_dynamics, (Q, QD, QDD)), (screwdyn.coriolis_matrix, (Q, QD))]:
        batch = f(model, *args)
        for k in range(2):
            assert np.array_equal(f(model, *(a[k] for a in args)), batch[k]), f.__name__


def test_every_kernel_fits_the_stack_up_to_stack_bodies():
    """work.STACK_BODIES: up to that many bodies one state of every kernel fits STACK_LIMIT (the
    fast paths rely on it), and one more body does not fit every kernel."""
    import importlib

    entries = [e for m in ("rnea", "crba", "aba", "coriolis", "ltdl", "energy", "kinematics", "regressor")
               for e in importlib.import_module(f"screwdyn.algorithms.{m}").ENTRIES.values()]
    assert all(e.work_floats(work.STACK_BODIES) <= work.STACK_LIMIT for e in entries)
    assert any(e.work_floats(work.STACK_BODIES + 1) > work.STACK_LIMIT for e in entries)


def test_on_large_stack_runs_where_the_calling_thread_could_not():
    """dispatch.on_large_stack: a function on a thread whose stack takes the given work, its result
    or its exception handed back."""
    from screwdyn.dispatch import on_large_stack

    assert on_large_stack(10**6, lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        on_large_stack(10, lambda: 1 / 0)


def test_fast_path_kernels_run_without_numba_runtime_and_keep_reference_counts(rng):
    """The one-state entry points are compiled without numba's reference-counting runtime
    (target.KERNEL): they take arrays without a reference-counted record. Thousands of calls,
    with and without ``out``, leave every argument's reference count as it was, and the answers
    equal the general path's (a list input goes there)."""
    import sys

    from screwdyn.algorithms import aba, coriolis, crba, rnea, target

    for kernel in (rnea.rnea_one, crba.crba_one, aba.aba_one, coriolis.coriolis_one, rnea.rnea, aba.aba):
        assert kernel.targetoptions.get("_nrt", True) is (target.MODE == "plain"), kernel.__name__
    model = random_model(rng, n=7, fixed=2)
    n = model.n
    q, qd, qdd = random_state(rng, n)
    functions = [(screwdyn.inverse_dynamics, (q, qd, qdd), (n,)), (screwdyn.mass_matrix, (q,), (n, n)),
                 (screwdyn.forward_dynamics, (q, qd, qdd), (n,)), (screwdyn.coriolis_matrix, (q, qd), (n, n))]
    for f, args, shape in functions:
        out = np.empty(shape)
        first = f(model, *args)
        counts = [sys.getrefcount(x) for x in (model._kd, out) + args]
        for _ in range(2000):
            f(model, *args)
            f(model, *args, out=out)
        assert [sys.getrefcount(x) for x in (model._kd, out) + args] == counts, f.__name__
        assert sys.getrefcount(f(model, *args)) == 2, f.__name__   # a fresh answer that nothing else holds
        assert np.array_equal(out, first) and np.array_equal(f(model, *(list(a) for a in args)), first), f.__name__


class _Subclass(np.ndarray):
    pass


class _DuckArray:
    """Not an ndarray, but with the attributes that the fast paths test."""
    def __init__(self, x):
        self.x = np.asarray(x)
        self.ndim, self.dtype, self.shape = self.x.ndim, self.x.dtype, self.x.shape

    def __array__(self, dtype=None, copy=None):
        return self.x if dtype is None else self.x.astype(dtype)


def test_single_state_inputs_of_any_layout_give_the_same_answer(rng):
    """The fast paths call the kernels' compiled entry points, bound for 1-D inputs of any stride:
    strided views (the kernels answer NOT_FAST and the general path copies), read-only arrays,
    rows of a batch, lists, array subclasses, objects that only look like arrays, and integers
    all give the contiguous float64 answer exactly."""
    model = random_model(rng, n=6, fixed=1)
    n = model.n
    q, qd, qdd = random_state(rng, n)
    cases = {
        "strided": lambda x: np.repeat(x, 2)[::2],
        "reversed": lambda x: x[::-1].copy()[::-1],
        "read-only": lambda x: np.broadcast_to(x, (1, n))[0],
        "row of a batch": lambda x: np.stack([x, x])[1],
        "column of a Fortran batch": lambda x: np.asfortranarray(np.stack([x, x], axis=1))[:, 0],
        "list": lambda x: list(x),
        "array subclass": lambda x: x.view(_Subclass),
        "duck array": _DuckArray,   # ndim 1, dtype float64, no ndarray: numba's unboxing refuses it
    }
    functions = [(screwdyn.inverse_dynamics, (q, qd, qdd)), (screwdyn.mass_matrix, (q,)),
                 (screwdyn.forward_dynamics, (q, qd, qdd)), (screwdyn.coriolis_matrix, (q, qd)),
                 (screwdyn.gravity_torques, (q,)), (screwdyn.bias_torques, (q, qd))]
    for f, args in functions:
        want = f(model, *args)
        for name, make in cases.items():
            got = f(model, *(make(a) for a in args))
            assert np.array_equal(got, want), (f.__name__, name)
    assert not np.repeat(q, 2)[::2].flags.c_contiguous
    q_int = np.arange(n)
    assert np.array_equal(screwdyn.mass_matrix(model, q_int), screwdyn.mass_matrix(model, q_int.astype(float)))


def test_batch_inputs_of_any_layout_give_the_same_answer(rng):
    """A ``(B, n)`` batch of float64 states goes to the batch kernels' compiled entry points, which
    check no layout: the entry points test shapes and strides (``work.is_rows``) and answer NOT_FAST for
    what the general path must copy. Strided rows or columns, Fortran order, reversed strides,
    read-only arrays, a single row, lists, subclasses, duck arrays and integers all give the answer
    of contiguous float64 input exactly, which is also the general path's (``out=``)."""
    model = random_model(rng, n=6, fixed=1)
    n = model.n
    Q, QD, QDD = random_state(rng, n, (7,))
    Q[3] = np.arange(n)   # a row of whole numbers: the integer case below stays exact
    cases = {
        "strided rows": lambda x: np.repeat(x, 2, axis=0)[::2],
        "strided columns": lambda x: np.repeat(x, 2, axis=1)[:, ::2],
        "Fortran order": np.asfortranarray,
        "reversed": lambda x: x[::-1].copy()[::-1],
        "read-only": lambda x: np.broadcast_to(x, (1,) + x.shape)[0],
        "list": lambda x: x.tolist(),
        "array subclass": lambda x: x.view(_Subclass),
        "duck array": _DuckArray,
    }
    functions = [(screwdyn.inverse_dynamics, (Q, QD, QDD), (7, n)), (screwdyn.mass_matrix, (Q,), (7, n, n)),
                 (screwdyn.forward_dynamics, (Q, QD, QDD), (7, n)), (screwdyn.coriolis_matrix, (Q, QD), (7, n, n))]
    for f, args, shape in functions:
        want = f(model, *args)
        general = f(model, *args, out=np.empty(shape))
        assert np.array_equal(general, want), f.__name__
        for name, make in cases.items():
            got = f(model, *(make(a) for a in args))
            assert got.shape == shape and np.array_equal(got, want), (f.__name__, name)
        one = f(model, *(a[2:3] for a in args))   # B = 1: the row stride does not matter
        assert one.shape == (1,) + shape[1:] and np.array_equal(one[0], want[2]), f.__name__
        one_strided = f(model, *(np.repeat(a[2:3], 3, axis=0)[::3] for a in args))
        assert np.array_equal(one_strided[0], want[2]), f.__name__
        empty = f(model, *(a[:0] for a in args))
        assert empty.shape == (0,) + shape[1:], f.__name__
    q_int = Q[3].astype(np.int64)[None, :].repeat(2, axis=0)
    assert np.array_equal(screwdyn.mass_matrix(model, q_int), screwdyn.mass_matrix(model, q_int.astype(float)))


def test_batch_fast_path_reports_bad_states_and_shapes(rng):
    """Through the batch entry points: a NaN or inf in one state is reported with its batch index,
    a wrong number of columns or mismatched batch sizes get the general path's message, and
    states that broadcast (one row against many) still broadcast."""
    from screwdyn.errors import InputError

    model = random_model(rng, n=5, fixed=0)
    n = model.n
    Q, QD, QDD = random_state(rng, n, (40,))
    functions = [(screwdyn.inverse_dynamics, (Q, QD, QDD), ("q", "qd", "qdd")),
                 (screwdyn.forward_dynamics, (Q, QD, QDD), ("q", "qd", "tau")),
                 (screwdyn.mass_matrix, (Q,), ("q",)), (screwdyn.coriolis_matrix, (Q, QD), ("q", "qd"))]
    for f, args, names in functions:
        for a, name in zip(args, names):
            for bad in (np.nan, np.inf):
                arrays = [x.copy() for x in args]
                arrays[names.index(name)][33, 1] = bad
                with pytest.raises(InputError, match=rf"^{name} contains NaN or inf \(batch index \(33,\)\)"):
                    f(model, *arrays)
        wide = [np.hstack([x, x[:, :1]]) for x in args]
        with pytest.raises(InputError, match=rf"must have shape \({n},\) or \(\.\.\., {n}\)"):
            f(model, *wide)
        if len(args) > 1:
            with pytest.raises(InputError, match="do not broadcast"):
                f(model, args[0], *(x[:39] for x in args[1:]))
            got = f(model, args[0], *(x[:1] for x in args[1:]))
            want = f(model, args[0], *(np.repeat(x[:1], 40, axis=0) for x in args[1:]))
            assert np.array_equal(got, want), f.__name__


def test_batch_kernels_follow_numbas_thread_count(rng):
    """The batch entry points read numba's thread count where they run (``work.units``): one
    thread or all give the same answer bit for bit."""
    import numba

    model = random_model(rng, n=7, fixed=1, branching=0.3)
    Q, QD, QDD = random_state(rng, model.n, (101,))
    threads = numba.get_num_threads()
    want = [screwdyn.inverse_dynamics(model, Q, QD, QDD), screwdyn.forward_dynamics(model, Q, QD, QDD),
            screwdyn.mass_matrix(model, Q), screwdyn.coriolis_matrix(model, Q, QD)]
    numba.set_num_threads(1)
    try:
        got = [screwdyn.inverse_dynamics(model, Q, QD, QDD), screwdyn.forward_dynamics(model, Q, QD, QDD),
               screwdyn.mass_matrix(model, Q), screwdyn.coriolis_matrix(model, Q, QD)]
    finally:
        numba.set_num_threads(threads)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


def test_claims_hand_every_state_to_exactly_one_thread():
    """work.units and work.claim, the batch drivers' scheduling: units taking claim_size states at a
    time (whole lane groups, at most CLAIM; in plain mode a unit per claim) cover a batch once,
    whatever its size, with no state twice."""
    from numba import prange

    @kernel_jit(parallel=True)
    def cover(B, lanes):
        hits = np.zeros(B, dtype=np.int64)
        count, size, counter = work.units(B, lanes)
        taken = np.zeros(max(count, 1), dtype=np.int64)   # states each unit took
        for u in prange(count):
            start, end = work.claim(counter, u, B, size)
            while start < end:
                taken[u] += end - start
                for k in range(start, end):
                    hits[k] += 1
                start, end = work.claim(counter, u, B, size)
        return hits, taken, size

    for lanes in (8, 32):
        for B in (0, 1, work.CLAIM - 1, work.CLAIM, 1000, 20 * work.CLAIM + 7):
            hits, taken, size = cover(B, lanes)
            assert size % lanes == 0 and lanes <= size <= max(lanes, work.CLAIM)
            assert hits.shape == (B,) and np.all(hits == 1), (B, lanes)
            assert taken.sum() == B, (B, lanes, taken)
            assert np.count_nonzero(taken % size) <= 1, (B, lanes, taken)   # whole claims, but the last
