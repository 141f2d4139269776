"""screwdyn.dispatch, the one place that calls the kernels: each kernel module's declared entry
points, the fast paths for f_ext (an array or a dict), and what a first call says when it compiles."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state
from screwdyn import dispatch
from screwdyn.errors import InputError


def test_every_kernel_module_declares_entry_points_with_well_formed_signatures():
    kernels = dispatch.kernels()
    keys = {k.key for k in kernels}
    assert {"rnea", "crba", "aba", "coriolis", "fd_crb", "minv", "energy", "poses", "jacobian", "frame_motion",
            "regressor"} <= keys
    for k in kernels:
        entry = k.entry
        one, batch = entry.signature("one"), entry.signature("batch")
        extra = 2 if entry.fext else 0
        assert len(one) == 1 + len(entry.states) + extra + len(entry.params) + len(entry.outputs)
        assert len(batch) == len(one) + 1 + bool(entry.lanes)   # status, and the compile-time lanes
        assert entry.work_floats(10) > 0 and entry.per_lane.py_func(10) == entry.work_floats(10)


def test_f_ext_as_an_array_or_a_dict_gives_the_general_paths_answer(rng):
    """A C-contiguous float64 f_ext and a dict of single wrenches take the fast path; a strided
    f_ext the general path: the same numbers. A dict naming an unknown frame, or a wrench of the
    wrong shape, gets the general path's message."""
    model = random_model(rng, n=6, fixed=2)
    n = model.n
    q, qd, qdd = random_state(rng, n)
    F = rng.normal(size=(n, 6))
    strided = np.repeat(F, 2, axis=1)[:, ::2]
    assert not strided.flags.c_contiguous
    frames = [f for f in model.frame_names if model.frame_body[model.frame_index(f)] >= 0][:2]
    wrenches = {f: rng.normal(size=6) for f in frames}
    as_array = screwdyn.external_wrenches(model, wrenches)
    for f, args in ((screwdyn.inverse_dynamics, (q, qd, qdd)), (screwdyn.bias_torques, (q, qd)),
                    (screwdyn.forward_dynamics, (q, qd, qdd))):
        want = f(model, *args, f_ext=np.array(F))
        assert np.array_equal(f(model, *args, f_ext=strided), want), f.__name__
        assert np.array_equal(f(model, *args, f_ext=as_array), f(model, *args, f_ext=wrenches)), f.__name__
        assert np.array_equal(f(model, *args, f_ext={k: list(w) for k, w in wrenches.items()}),
                              f(model, *args, f_ext=wrenches)), f.__name__
    with pytest.raises(InputError, match="unknown link or frame 'nowhere'"):
        screwdyn.inverse_dynamics(model, q, qd, qdd, f_ext={"nowhere": np.zeros(6)})
    with pytest.raises(InputError, match="f_ext"):
        screwdyn.inverse_dynamics(model, q, qd, qdd, f_ext={frames[0]: np.zeros(5)})
    with pytest.raises(InputError, match="takes no f_ext"):
        dispatch.call(dispatch.Kernel("crba", "crba"), model, (q,), fext=F)


def test_a_dict_of_wrenches_for_a_batch(rng):
    """With a batch of states, a dict's wrenches may be one for all (6,) or one per state (B, 6)."""
    model = random_model(rng, n=5, fixed=1)
    frame = model.link_names[-1]
    Q, QD, QDD = random_state(rng, model.n, (4,))
    W = rng.normal(size=(4, 6))
    tau = screwdyn.inverse_dynamics(model, Q, QD, QDD, f_ext={frame: W})
    same = screwdyn.inverse_dynamics(model, Q, QD, QDD, f_ext={frame: W[1]})
    for k in range(4):
        assert np.array_equal(tau[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k], f_ext={frame: W[k]}))
        assert np.array_equal(same[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k], f_ext={frame: W[1]}))


FIRST_CALLS = """
import numpy as np, screwdyn
b = screwdyn.ModelBuilder("one_link")
b.add_body("a", "base", "j1", "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3)
m = b.build()
x = np.array([0.3])
screwdyn.kinetic_energy(m, x, x)
screwdyn.kinetic_energy(m, x, x)
screwdyn.jacobian(m, x, "a")
"""


def test_a_first_call_that_compiles_says_so_once(tmp_path):
    """With an empty numba cache the first call that compiles says so on stderr, once a process;
    the next process, on the cache the first filled, says nothing."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    said = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(FIRST_CALLS)], env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        said.append([line for line in r.stderr.splitlines() if line.startswith("screwdyn:")])
    assert len(said[0]) == 1 and "compiling energies and momentum on its first use" in said[0][0]
    assert str(tmp_path) in said[0][0]
    assert said[1] == []


# ---------------------------------------------------------------------------------- memory
def test_a_result_that_does_not_fit_in_memory_is_refused_before_any_work(monkeypatch):
    """mass_matrix of a broadcast batch of 10^8 states of a 44-body robot (Talos' size) would need 1.4 TiB:
    refused at once, naming the function and the size, as a TooLargeError (an InputError and a MemoryError)."""
    import time

    from screwdyn.errors import TooLargeError
    model = random_model(np.random.default_rng(0), n=44, fixed=0)
    q = np.broadcast_to(np.zeros(model.n), (10**8, model.n))
    t0 = time.perf_counter()
    with pytest.raises(TooLargeError, match=r"the mass matrix: the float64 result \(100000000, 44, 44\) .*of "
                                            r"100000000 states need 1.4\d TiB, more than the .* of memory available"):
        screwdyn.mass_matrix(model, q)
    with pytest.raises(MemoryError):
        screwdyn.inverse_dynamics(model, q, q, q)
    with pytest.raises(InputError, match="friction_torques: the float64 result"):
        screwdyn.friction_torques(model, q)
    assert time.perf_counter() - t0 < 5.0   # (the work would take hours, or all the memory)
    # where less memory is free, a smaller batch is refused; given outputs and rows need no room
    monkeypatch.setattr(dispatch, "available_memory", lambda: 100 << 20)
    Q = np.zeros((200_000, model.n))
    with pytest.raises(TooLargeError, match=r"inverse dynamics: the float64 result \(200000, 44\) and copies of the "
                                            r"inputs of 200000 states need 136 MiB, more than the 100 MiB"):
        screwdyn.inverse_dynamics(model, Q, Q, np.zeros(model.n))   # (the broadcast qdd is copied)
    out = np.empty_like(Q)
    assert screwdyn.inverse_dynamics(model, Q, Q, Q, out=out) is out


def test_a_large_batch_takes_the_general_path_with_the_same_answer(rng):
    """Beyond 65,536 states the fast path hands a batch to the general path (which checks the memory)."""
    model = random_model(rng, n=3, fixed=0)
    Q = rng.normal(size=(dispatch._FAST_ROWS + 5, model.n))
    tau = screwdyn.inverse_dynamics(model, Q, Q, Q)
    k = dispatch._FAST_ROWS + 3
    assert np.array_equal(tau[k], screwdyn.inverse_dynamics(model, Q[k], Q[k], Q[k]))


# ---------------------------------------------------------------------------------- threads
def _ticks_while(work, calls):
    """How often the main thread ran while another thread made ``calls`` calls of ``work``. With no
    forced switches (a switch interval of 30 s), the other thread gives the GIL up only where it
    releases it; the main thread, woken every 0.5 ms, counts a tick each time it gets it back."""
    import sys
    import threading
    import time
    done = threading.Event()

    def loop():
        for _ in range(calls):
            work()
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    ticks = 0
    try:
        worker = threading.Thread(target=loop)
        worker.start()
        while not done.is_set():
            time.sleep(0.0005)
            ticks += not done.is_set()
        worker.join()
    finally:
        sys.setswitchinterval(old)
    return ticks


def test_long_one_state_calls_release_the_gil_and_short_ones_keep_it(rng):
    """A one-state call releases the GIL for its kernel when the kernel is long (about 4 us or more:
    each algorithm's GIL_FROM, internals.release_gil), so that another thread runs meanwhile; a short
    one keeps it, as a loop of pure Python does (handing the GIL over would cost more than the
    call). Every one-state entry point is compiled without numba's nogil, which would release it
    for every call."""
    for kernel in dispatch.kernels():
        assert kernel.entry.one.targetoptions.get("nogil") is False, kernel.key
    big, small = random_model(rng, n=64, fixed=0), random_model(rng, n=6, fixed=0)
    calls = {
        "inverse_dynamics": lambda m, q: screwdyn.inverse_dynamics(m, q, q, q),
        "mass_matrix": lambda m, q: screwdyn.mass_matrix(m, q),
        "forward_dynamics": lambda m, q: screwdyn.forward_dynamics(m, q, q, q),
        "coriolis_matrix": lambda m, q: screwdyn.coriolis_matrix(m, q, q),
        "mass_matrix_inverse": lambda m, q: screwdyn.mass_matrix_inverse(m, q),
        "inverse_dynamics_derivatives": lambda m, q: screwdyn.inverse_dynamics_derivatives(m, q, q, q),
    }
    for name, f in calls.items():
        qb, qs = np.full(big.n, 0.3), np.full(small.n, 0.3)
        f(big, qb), f(small, qs)
        assert _ticks_while(lambda: f(big, qb), 3000) >= 5, name    # (5-100 us a call: 15-300 ms)
        assert _ticks_while(lambda: f(small, qs), 3000) == 0, name   # (about 1 us a call)
    assert _ticks_while(lambda: sum(range(5000)), 300) == 0


WORKQUEUE_THREADS = """
import threading, numpy as np, screwdyn, numba
b = screwdyn.ModelBuilder("chain")
for i in range(6):
    b.add_body(f"l{i}", "base" if i == 0 else f"l{i - 1}", f"j{i}", "revolute", axis=(0, 1, 1), mass=1.0,
               com=(0.1, 0, 0), inertia=np.eye(3) * 1e-2)
m = b.build()
Q = np.random.default_rng(1).normal(size=(2000, m.n))
ref = screwdyn.inverse_dynamics(m, Q, Q, Q)
def work():
    for _ in range(100):
        assert np.array_equal(screwdyn.inverse_dynamics(m, Q, Q, Q), ref)
threads = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(numba.threading_layer())
"""


def test_batches_from_many_threads_under_numba_workqueue_layer():
    """numba's workqueue threading layer (where neither TBB nor OpenMP is installed) ends the process
    when two threads enter a parallel region at once; screwdyn runs one batch at a time."""
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    r = subprocess.run([sys.executable, "-c", WORKQUEUE_THREADS], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-1] == "workqueue"


@pytest.mark.parametrize("bodies", [12, 110])
def test_calls_from_many_threads_give_the_serial_answers(rng, bodies):
    """Eight threads calling every kind of entry point on one model at once (its caches filled by the
    threads themselves) get the answers of serial calls, bit for bit. 110 bodies: a model whose one
    state does not fit a thread's stack, run on the large-stack thread."""
    from concurrent.futures import ThreadPoolExecutor
    model = random_model(rng, n=bodies, fixed=2)
    n, frame = model.n, model.frame_names[-1]
    Q, QD, QDD = random_state(rng, n, (24,))
    calls = [
        lambda k: screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k]),
        lambda k: screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k], f_ext={frame: QD[k, :6] if n >= 6 else np.ones(6)}),
        lambda k: screwdyn.mass_matrix(model, Q[k]),
        lambda k: screwdyn.forward_dynamics(model, Q[k], QD[k], QDD[k]),
        lambda k: screwdyn.jacobian(model, Q[k], frame),
        lambda k: screwdyn.frame_velocity(model, Q[k], QD[k], frame),
        lambda k: screwdyn.kinetic_energy(model, Q[k], QD[k]),
        lambda k: screwdyn.inverse_dynamics(model, Q[k:k + 3], QD[k:k + 3], QDD[k:k + 3]),   # a batch
    ]
    if bodies > 20:
        calls = calls[:4]
    serial = [[f(k) for k in range(len(Q))] for f in calls]
    fresh = model.replace()   # the same numbers, no cache yet
    assert fresh._derived == {}
    model = fresh
    jobs = [(c, k) for c in range(len(calls)) for k in range(len(Q))] * 2
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda job: calls[job[0]](job[1]), jobs))
    for (c, k), answer in zip(jobs, answers):
        assert np.array_equal(answer, serial[c][k]), (c, k)


def test_scalars_and_arrays_of_one_broadcast_as_numpys(rng):
    """A scalar, or an array whose last axis is 1, stands for every joint, as NumPy broadcasts it
    (the CLI's one number for every joint): the answers of the full arrays, bit for bit, in every
    public function of the state, one state and a batch. A wrong length still names its argument; a
    model whose q holds quaternions refuses a scalar q (and says why), not a scalar velocity."""
    model = random_model(rng, n=5, fixed=1)
    n = model.n
    q = rng.uniform(-1, 1, n)
    Q = rng.uniform(-1, 1, (3, n))
    full = lambda x, lead=(): np.broadcast_to(np.asarray(x, dtype=float), lead + (n,)).copy()
    frame = model.link_names[-1]
    functions = {
        "inverse_dynamics": (screwdyn.inverse_dynamics, 3), "forward_dynamics": (screwdyn.forward_dynamics, 3),
        "coriolis_matrix": (screwdyn.coriolis_matrix, 2), "kinetic_energy": (screwdyn.kinetic_energy, 2),
        "regressor": (screwdyn.regressor, 3), "linearize": (screwdyn.linearize, 3),
        "inverse_dynamics_derivatives": (screwdyn.inverse_dynamics_derivatives, 3),
        "jacobian": (lambda m, q: screwdyn.jacobian(m, q, frame), 1), "mass_matrix": (screwdyn.mass_matrix, 1),
        "integrate": (lambda m, q, v: screwdyn.integrate(m, q, v, 0.1), 2),
    }
    for name, (f, k) in functions.items():
        for qs, lead in ((q, ()), (Q, (3,))):
            for given in (0.5, [0.5], np.full(lead + (1,), 0.5)):
                rest = [given] * (k - 1)
                want = f(model, qs, *[full(0.5, lead)] * (k - 1))
                got = f(model, qs, *rest)
                for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
                    assert np.array_equal(w, g), (name, given, lead)
        scalar_q = f(model, 0.25, *[full(0.5)] * (k - 1))
        want = f(model, full(0.25), *[full(0.5)] * (k - 1))
        assert all(np.array_equal(w, g) for w, g in zip(want if isinstance(want, tuple) else (want,),
                                                        scalar_q if isinstance(scalar_q, tuple) else (scalar_q,))), name
        if k > 1:
            with pytest.raises(InputError, match=rf"must have shape \({n},\) or \(\.\.\., {n}\) .* got shape \(2,\)"):
                f(model, q, *[np.zeros(2)] * (k - 1))
    traj = screwdyn.simulate(model, 0.1, 0, 0.01, tau=[0.0])
    assert np.array_equal(traj.q, screwdyn.simulate(model, full(0.1), full(0), 0.01, tau=full(0)).q)
    floating = random_model(rng, n=3, fixed=0, floating=True)
    qf = screwdyn.neutral(floating)
    assert np.array_equal(screwdyn.inverse_dynamics(floating, qf, 0, 0),
                          screwdyn.inverse_dynamics(floating, qf, np.zeros(floating.nv), np.zeros(floating.nv)))
    for f in (lambda x: screwdyn.inverse_dynamics(floating, x, 0, 0), lambda x: screwdyn.mass_matrix(floating, x),
              lambda x: screwdyn.integrate(floating, x, 0, 0.1), lambda x: screwdyn.simulate(floating, x, 0, 0.01)):
        with pytest.raises(InputError, match=r"^q0? must have shape .*: this model's q holds quaternions"):
            f(0.0)
