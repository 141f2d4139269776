"""The public entry points of screwdyn.dynamics: shapes for one state and for batches, batches
equal to single calls, broadcasting, ``out=``, and bad input (wrong sizes, NaN/inf, unknown
frames or options) answered by an InputError that names the argument."""
import math
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import screwdyn
from helpers import random_model, random_state

N = 5
FRAME = -1  # the last frame of the model (a merged fixed link)


@pytest.fixture(scope="module")
def model():
    return random_model(np.random.default_rng(7), n=N, fixed=2, armature=True)


# name -> (function, state arguments, extra arguments, trailing shape of the result)
FUNCTIONS = {
    "inverse_dynamics": (screwdyn.inverse_dynamics, ("q", "qd", "qdd"), {}, (N,)),
    "mass_matrix": (screwdyn.mass_matrix, ("q",), {}, (N, N)),
    "mass_matrix_inverse": (screwdyn.mass_matrix_inverse, ("q",), {}, (N, N)),
    "gravity_torques": (screwdyn.gravity_torques, ("q",), {}, (N,)),
    "bias_torques": (screwdyn.bias_torques, ("q", "qd"), {}, (N,)),
    "coriolis_matrix": (screwdyn.coriolis_matrix, ("q", "qd"), {}, (N, N)),
    "forward_dynamics": (screwdyn.forward_dynamics, ("q", "qd", "tau"), {}, (N,)),
    "forward_dynamics_crba": (screwdyn.forward_dynamics, ("q", "qd", "tau"), {"method": "crba"}, (N,)),
    "kinetic_energy": (screwdyn.kinetic_energy, ("q", "qd"), {}, ()),
    "potential_energy": (screwdyn.potential_energy, ("q",), {}, ()),
    "mechanical_energy": (screwdyn.mechanical_energy, ("q", "qd"), {}, ()),
    "center_of_mass": (screwdyn.center_of_mass, ("q",), {}, (3,)),
    "momentum": (screwdyn.momentum, ("q", "qd"), {}, (6,)),
    "forward_kinematics": (screwdyn.forward_kinematics, ("q",), {}, None),  # (k, 4, 4)
    "body_poses": (screwdyn.body_poses, ("q",), {}, (N, 4, 4)),
    "frame_pose": (screwdyn.frame_pose, ("q",), {"frame": FRAME}, (4, 4)),
    "jacobian": (screwdyn.jacobian, ("q",), {"frame": FRAME, "reference": "body"}, (6, N)),
    "frame_velocity": (screwdyn.frame_velocity, ("q", "qd"), {"frame": FRAME}, (6,)),
    "jdot_qd": (screwdyn.jdot_qd, ("q", "qd"), {"frame": FRAME, "reference": "world_aligned"}, (6,)),
    "friction_torques": (screwdyn.friction_torques, ("qd",), {}, (N,)),
    "centroidal_momentum_matrix": (screwdyn.centroidal_momentum_matrix, ("q",), {}, (6, N)),
    "centroidal_momentum": (screwdyn.centroidal_momentum, ("q", "qd"), {}, (6,)),
}


def call(model, name, states, **more):
    f, args, extra, _ = FUNCTIONS[name]
    kwargs = dict(extra)
    if "frame" in kwargs and kwargs["frame"] == FRAME:
        kwargs["frame"] = model.frame_names[FRAME]
    kwargs.update(more)
    return f(model, *[states[a] for a in args], **kwargs)


def tail(model, name):
    shape = FUNCTIONS[name][3]
    return (len(model.frame_names), 4, 4) if shape is None else shape


def states(rng, batch=()):
    q, qd, qdd = random_state(rng, N, batch)
    return {"q": q, "qd": qd, "qdd": qdd, "tau": qdd * 2}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_one_state_and_a_batch(model, name, rng):
    S = states(rng, (2, 3))
    out = call(model, name, S)
    assert np.shape(out) == (2, 3) + tail(model, name)
    for a in range(2):
        for b in range(3):
            single = call(model, name, {k: v[a, b] for k, v in S.items()})
            assert np.shape(single) == tail(model, name)
            assert np.array_equal(out[a, b], single)
    # lists are accepted, and a batch of one keeps its axis
    lists = {k: v[0, 0].tolist() for k, v in S.items()}
    assert np.array_equal(call(model, name, lists), out[0, 0])
    one = call(model, name, {k: v[:1, 0] for k, v in S.items()})
    assert np.shape(one) == (1,) + tail(model, name)


@pytest.mark.parametrize("name", [name for name, f in FUNCTIONS.items() if len(f[1]) > 1])
def test_state_arguments_broadcast(model, name, rng):
    S = states(rng, (4,))
    S1 = {k: v[0] for k, v in S.items()}
    mixed = dict(S1, q=S["q"])           # a batch of q against one of everything else
    out = call(model, name, mixed)
    assert np.shape(out) == (4,) + tail(model, name)
    assert np.array_equal(out[2], call(model, name, dict(S1, q=S["q"][2])))
    bad = dict(S, q=S["q"][:3])
    with pytest.raises(screwdyn.InputError, match="broadcast"):
        call(model, name, bad)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_wrong_sizes_and_non_finite_values_name_the_argument(model, name, rng):
    args = FUNCTIONS[name][1]
    for arg in args:
        for batch in ((), (3,)):
            S = states(rng, batch)
            bad = dict(S)
            bad[arg] = np.zeros(batch + (N + 1,))
            with pytest.raises(screwdyn.InputError, match=rf"{arg} must have shape \({N},\)"):
                call(model, name, bad)
            for value in (np.nan, np.inf):
                bad = dict(S)
                bad[arg] = S[arg].copy()
                bad[arg][..., 1] = value
                expected = f"{arg} contains NaN or inf" + (r" \(batch index \(0,\)\)" if batch else "")
                with pytest.raises(screwdyn.InputError, match=expected):
                    call(model, name, bad)
        bad = dict(states(rng))
        bad[arg] = "abc"
        with pytest.raises(screwdyn.InputError, match=arg):
            call(model, name, bad)
    kwargs = dict(FUNCTIONS[name][2])
    if "frame" in kwargs:
        kwargs["frame"] = 0
    with pytest.raises(screwdyn.InputError, match="model"):
        FUNCTIONS[name][0]("not a model", *[np.zeros(N)] * len(args), **kwargs)
    scalars = call(model, name, {k: 0.5 for k in ("q", "qd", "qdd", "tau")})   # a scalar: every joint, as NumPy
    assert np.array_equal(scalars, call(model, name, {k: np.full(N, 0.5) for k in ("q", "qd", "qdd", "tau")}))


@pytest.mark.parametrize("name", ["inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "gravity_torques",
                                  "bias_torques", "coriolis_matrix", "forward_dynamics", "forward_dynamics_crba",
                                  "jacobian"])
def test_out_argument(model, name, rng):
    """``out`` receives the answer (one state, a (B, n) batch, which the fast paths take to the
    compiled entry points, and a deeper batch); an ``out`` of the wrong shape, dtype or number of
    dimensions, not C-contiguous, or read-only is refused with an InputError and left as it was.
    A float64 ``out`` that is not aligned (which the fast paths leave to the general path) receives
    the answer too."""
    for batch in ((), (3,), (2, 2)):
        S = states(rng, batch)
        shape = batch + tail(model, name)
        out = np.empty(shape)
        assert call(model, name, S, out=out) is out
        assert np.array_equal(out, call(model, name, S))
        unaligned = np.zeros(8 * int(np.prod(shape)) + 1, dtype=np.uint8)[1:].view(np.float64).reshape(shape)
        assert not unaligned.flags.aligned and unaligned.flags.c_contiguous
        assert call(model, name, S, out=unaligned) is unaligned
        assert np.array_equal(unaligned, out)
        bad_outs = {
            "wrong shape": np.zeros(batch + (N + 2,)),
            "float32": np.zeros(shape, dtype=np.float32),
            "int64": np.zeros(shape, dtype=np.int64),   # 8 bytes an item, as float64
            "one dimension more": np.zeros((1,) + shape),
            "not contiguous": np.zeros(shape + (2,))[..., 0],
            "read-only": np.zeros(shape),
        }
        bad_outs["read-only"].setflags(write=False)
        for what, bad in bad_outs.items():
            with pytest.raises(screwdyn.InputError, match="out must be a writable C-contiguous float64 array"):
                call(model, name, S, out=bad)
            assert not bad.any(), what


@pytest.mark.parametrize("name", ["frame_pose", "jacobian", "frame_velocity", "jdot_qd"])
def test_frames_and_references(model, name, rng):
    S = states(rng)
    for frame in (model.frame_names[3], 3, model.link_names[0]):
        assert np.shape(call(model, name, S, frame=frame)) == tail(model, name)
    assert np.array_equal(call(model, name, S, frame=3), call(model, name, S, frame=model.frame_names[3]))
    with pytest.raises(screwdyn.InputError, match="frame: unknown frame 'nowhere'"):
        call(model, name, S, frame="nowhere")
    with pytest.raises(screwdyn.InputError, match="frame"):
        call(model, name, S, frame=len(model.frame_names))
    if name != "frame_pose":
        with pytest.raises(screwdyn.InputError, match="reference"):
            call(model, name, S, reference="tool")
        # Pinocchio's names are accepted as aliases
        for ours, theirs in (("space", "world"), ("body", "local"), ("world_aligned", "local_world_aligned")):
            assert np.array_equal(call(model, name, S, reference=ours), call(model, name, S, reference=theirs))


def test_external_wrenches_in_bias_and_forward_dynamics(model, rng):
    S = states(rng)
    F = rng.normal(size=(N, 6))
    name = model.frame_names[-1]
    w = rng.normal(size=6)
    z = np.zeros(N)
    for f_ext in (F, {name: w}):
        h = screwdyn.bias_torques(model, S["q"], S["qd"], f_ext)
        assert np.array_equal(h, screwdyn.inverse_dynamics(model, S["q"], S["qd"], z, f_ext))
        qdd = screwdyn.forward_dynamics(model, S["q"], S["qd"], S["tau"], f_ext)
        assert np.allclose(screwdyn.inverse_dynamics(model, S["q"], S["qd"], qdd, f_ext), S["tau"], atol=1e-9)
    # one wrench set broadcast against a batch of states, and a batch of wrench sets
    B = states(rng, (3,))
    qdd = screwdyn.forward_dynamics(model, B["q"], B["qd"], B["tau"], F)
    assert np.array_equal(qdd[1], screwdyn.forward_dynamics(model, B["q"][1], B["qd"][1], B["tau"][1], F))
    FB = rng.normal(size=(3, N, 6))
    qdd = screwdyn.forward_dynamics(model, B["q"], B["qd"], B["tau"], FB, method="crba")
    assert np.array_equal(qdd[2], screwdyn.forward_dynamics(model, B["q"][2], B["qd"][2], B["tau"][2], FB[2],
                                                           method="crba"))
    bad = F.copy()
    bad[0, 0] = np.nan
    for method in ("aba", "crba"):
        with pytest.raises(screwdyn.InputError, match="f_ext contains NaN"):
            screwdyn.forward_dynamics(model, S["q"], S["qd"], S["tau"], bad, method=method)
    with pytest.raises(screwdyn.InputError, match="f_ext"):
        screwdyn.forward_dynamics(model, S["q"], S["qd"], S["tau"], F[:2])
    with pytest.raises(screwdyn.InputError, match="unknown link or frame"):
        screwdyn.bias_torques(model, S["q"], S["qd"], {"nowhere": w})


def test_friction_options(model, rng):
    S = states(rng)
    tf = screwdyn.friction_torques(model, S["qd"])
    assert np.allclose(tf, model.damping * S["qd"] + model.friction * np.sign(S["qd"]))
    tau = screwdyn.inverse_dynamics(model, S["q"], S["qd"], S["qdd"])
    assert np.allclose(screwdyn.inverse_dynamics(model, S["q"], S["qd"], S["qdd"], friction=True), tau + tf)
    qdd = screwdyn.forward_dynamics(model, S["q"], S["qd"], tau + tf, friction=True)
    assert np.allclose(qdd, S["qdd"], atol=1e-9)
    with pytest.raises(screwdyn.InputError, match="method"):
        screwdyn.forward_dynamics(model, S["q"], S["qd"], tau, method="euler")
    bad = np.stack([S["qd"], S["qd"]])
    bad[1, 2] = np.nan
    with pytest.raises(screwdyn.InputError, match=r"qd contains NaN or inf \(batch index \(1,\)\)"):
        screwdyn.friction_torques(model, bad)
    with pytest.raises(screwdyn.InputError, match="qd"):
        screwdyn.inverse_dynamics(model, S["q"], bad, S["qdd"], friction=True)
    huge = np.full(model.n, 1e307)
    damped = model.replace(damping=np.full(model.n, 100.0))   # b qd overflows: an error, never inf torques
    with pytest.raises(screwdyn.InputError, match="overflow|too large|finite"):
        screwdyn.friction_torques(damped, huge)
    with pytest.raises(screwdyn.InputError, match="overflow|too large|finite"):
        screwdyn.inverse_dynamics(damped, S["q"], huge, S["qdd"], friction=True)


def test_joint_torques_from_wrench_inputs(model, rng):
    S = states(rng)
    f = model.frame_names[-1]
    w = rng.normal(size=6)
    assert screwdyn.joint_torques_from_wrench(model, S["q"], f, w).shape == (N,)
    B = states(rng, (4,))
    tau = screwdyn.joint_torques_from_wrench(model, B["q"], f, w)          # one wrench, a batch of states
    assert tau.shape == (4, N)
    assert np.allclose(tau[3], screwdyn.joint_torques_from_wrench(model, B["q"][3], f, w))
    with pytest.raises(screwdyn.InputError, match="wrench must have shape"):
        screwdyn.joint_torques_from_wrench(model, S["q"], f, np.zeros(5))
    with pytest.raises(screwdyn.InputError, match="wrench contains NaN"):
        screwdyn.joint_torques_from_wrench(model, S["q"], f, np.full(6, np.nan))
    with pytest.raises(screwdyn.InputError, match="broadcast"):
        screwdyn.joint_torques_from_wrench(model, B["q"], f, np.zeros((3, 6)))


# ---------------------------------------------------------------------------------------------
# Zero degrees of freedom, empty batches.
# ---------------------------------------------------------------------------------------------
def zero_dof_model():
    """No moving joint: a base with a welded link (example-robot-data's quadrotor_base, iris_simple)."""
    b = screwdyn.ModelBuilder("welded")
    b.add_body("plate", "base", "weld", "fixed", inertial=screwdyn.inertia.box(1.0, 0.2, 0.2, 0.05))
    return b.build()


def _tail_for(model, name):
    shape = tail(model, name)
    return tuple(model.n if d == N else d for d in shape)   # (N is 5: no other dimension is)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_zero_degrees_of_freedom(name):
    """Every function answers one state (0,), batches (B, 0), (2, 3, 0) and an empty batch (0, 0) with
    results of the right shape: zero torques and energies, identity poses, empty matrices. The centre
    of mass of a model with no moving mass is no number: a ModelError says so."""
    model = zero_dof_model()
    assert model.n == 0
    for batch in ((), (4,), (2, 3), (0,)):
        S = {k: np.zeros(batch + (0,)) for k in ("q", "qd", "qdd", "tau")}
        if name in ("center_of_mass", "centroidal_momentum"):
            with pytest.raises(screwdyn.ModelError, match="no mass"):
                call(model, name, S)
            continue
        out = call(model, name, S)
        assert np.shape(out) == batch + _tail_for(model, name), batch
        if name in ("forward_kinematics", "frame_pose"):
            assert np.array_equal(out, np.broadcast_to(np.eye(4), np.shape(out)))
        else:
            assert not np.any(out), name


@pytest.mark.parametrize("name", FUNCTIONS)
def test_empty_batches(model, name):
    for batch in ((0,), (2, 0), (0, 3)):
        S = {k: np.zeros(batch + (N,)) for k in ("q", "qd", "qdd", "tau")}
        assert np.shape(call(model, name, S)) == batch + tail(model, name)


# ---------------------------------------------------------------------------------------------
# Inputs a user will send: any dtype, layout, shape or value, as a property test.
# ---------------------------------------------------------------------------------------------
def _state_argument(draw, tail):
    """An argument of trailing shape ``tail`` (``(n,)`` for a state) as a user may send it, and whether it
    must be refused: ``"always"``, ``"values"`` (a NaN or inf: refused when some state is computed), or ``""``."""
    batch = draw(st.sampled_from([(), (), (2,), (3,), (1,), (2, 3), (0,)]))
    n = tail[-1]
    x = draw(hnp.arrays(np.float64, batch + tail, elements=st.floats(-4, 4)))
    kind = draw(st.sampled_from(["float64", "int", "float32", "float16", "longdouble", "uint8", "bool", "object",
                                 "complex", "complex_zero_imag", "text", "bytes", "none", "ragged", "list",
                                 "noncontiguous", "fortran", "readonly", "broadcast", "zero_d", "python_scalar",
                                 "wrong_trailing", "nan", "inf", "huge", "huge_int", "datetime"]))
    refused = "always" if kind in ("complex", "complex_zero_imag", "text", "bytes", "none", "ragged",
                                   "wrong_trailing", "huge_int", "datetime") else ""
    if kind in ("zero_d", "python_scalar") and len(tail) > 1:
        refused = "always"   # a scalar is every joint of a state (as NumPy broadcasts it), not f_ext's (n, 6)
    if kind in ("int", "float32", "float16", "longdouble", "uint8", "bool"):
        dtype = {"int": np.int64, "uint8": np.uint8}.get(kind, kind)
        x = (np.abs(x) if kind == "uint8" else x).astype(dtype)
    elif kind == "object":
        x = np.array([float(v) for v in x.reshape(-1)] + [None], dtype=object)[:-1].reshape(x.shape)
    elif kind == "complex":
        x = x + 1j
    elif kind == "complex_zero_imag":
        x = x.astype(complex)          # no imaginary part, but complex all the same: refused, never cast
    elif kind == "text":
        x = x.astype(str)
    elif kind == "bytes":
        x = b"\x00" * 8 * n
    elif kind == "none":
        x = None
    elif kind == "ragged":
        x = [[0.0] * n, [0.0] * (n + 1)]
    elif kind == "list":
        x = x.tolist()
        refused = "always" if np.shape(x)[-len(tail):] != tail else ""   # [] for an empty batch: no n numbers
    elif kind == "noncontiguous":
        x = np.repeat(x, 2, axis=-1)[..., ::2]
    elif kind == "fortran":
        x = np.asfortranarray(x)
    elif kind == "readonly":
        x.setflags(write=False)
    elif kind == "broadcast":
        x = np.broadcast_to(x.reshape(-1, *tail)[:1] if x.size else np.zeros((1, *tail)), (3, *tail))   # strides 0
    elif kind == "zero_d":
        x = np.array(0.5)
    elif kind == "python_scalar":
        x = 0.5
    elif kind == "wrong_trailing":
        x = np.zeros(batch + tail[:-1] + (n + draw(st.sampled_from([-1, 1])),))
    elif kind in ("nan", "inf"):
        if x.size:
            x.reshape(-1)[draw(st.integers(0, x.size - 1))] = np.nan if kind == "nan" else -np.inf
            refused = "values"
    elif kind == "huge":
        x = x * 10.0 ** draw(st.integers(100, 307))
    elif kind == "huge_int":
        x = np.full(tail, 10 ** 400, dtype=object).tolist()
    elif kind == "datetime":
        x = np.zeros(tail, dtype="datetime64[s]")
    return x, refused


# Besides FUNCTIONS: name -> (function, {argument: trailing shape}, other arguments)
MORE = {
    "regressor": (screwdyn.regressor, {"q": (N,), "qd": (N,), "qdd": (N,)}, {}),
    "joint_torques_from_wrench": (screwdyn.joint_torques_from_wrench, {"q": (N,), "wrench": (6,)}, {"frame": FRAME}),
    "inverse_dynamics_f_ext": (screwdyn.inverse_dynamics, {"q": (N,), "qd": (N,), "qdd": (N,), "f_ext": (N, 6)}, {}),
    "inverse_dynamics_derivatives": (screwdyn.inverse_dynamics_derivatives, {"q": (N,), "qd": (N,), "qdd": (N,)}, {}),
    "forward_dynamics_derivatives": (screwdyn.forward_dynamics_derivatives, {"q": (N,), "qd": (N,), "tau": (N,)}, {}),
}


def invoke(model, name, S):
    if name not in MORE:
        return call(model, name, S)
    f, _, extra = MORE[name]
    kwargs = {k: model.frame_names[v] if k == "frame" else v for k, v in extra.items()}
    return f(model, **S, **kwargs) if "wrench" not in S else f(model, S["q"], wrench=S["wrench"], **kwargs)


@st.composite
def user_states(draw):
    name = draw(st.sampled_from(sorted(FUNCTIONS) + sorted(MORE)))
    tails = MORE[name][1] if name in MORE else {a: (N,) for a in FUNCTIONS[name][1]}
    drawn = {a: _state_argument(draw, tail) for a, tail in tails.items()}
    if drawn.get("f_ext", (0,))[0] is None:
        drawn["f_ext"] = (None, "")   # (f_ext=None: no external wrench)
    return name, drawn


def _as_float64(x):
    return None if x is None else np.ascontiguousarray(np.asarray(x, dtype=float))


@given(user_states())
def test_any_state_argument_gets_the_float64_answer_or_an_error_naming_it(model, case):
    """Integers, booleans, floats of any width, Python numbers, any layout: the same answer as the float64
    C-contiguous array holding the same numbers; a scalar (0-d) broadcasts to every joint. Complex
    numbers (even with no imaginary part), text, None, ragged lists, a scalar f_ext, a wrong trailing
    size, NaN or inf: an InputError naming the argument.
    Huge values: the answer, finite, or an InputError saying the result overflows. Never another
    exception, a numpy warning, or a NaN or inf in an answer."""
    name, given_states = case
    S = {a: x for a, (x, _) in given_states.items()}
    try:
        no_state = math.prod(np.broadcast_shapes(*[np.shape(x) for x in S.values()])[:-1]) == 0
    except ValueError:   # ragged, or not broadcasting
        no_state = False
    must_refuse = [a for a, (_, refused) in given_states.items()
                   if refused == "always" or (refused == "values" and not no_state)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a ComplexWarning (imaginary part dropped) or a RuntimeWarning: a defect
        try:
            out = invoke(model, name, S)
        except screwdyn.InputError as e:
            msg = str(e)
            if must_refuse:
                assert any(a in msg for a in must_refuse) or "broadcast" in msg, msg
            else:
                assert any(a in msg for a in S), msg
                assert "broadcast" in msg or "not finite" in msg, msg
            return
        assert not must_refuse, (must_refuse, name)
        assert np.all(np.isfinite(out)), name
        want = invoke(model, name, {a: _as_float64(x) for a, x in S.items()})
    assert np.array_equal(out, want), name
