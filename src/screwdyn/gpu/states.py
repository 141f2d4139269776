"""One state's passes, for the GPU drivers (:mod:`.drivers`): each algorithm's body loop for a
single state, written with the CPU kernels' own per-body helpers and work arrays ``(rows, k)``
that the driver hands in (a CUDA thread's local arrays).

These are the loops of :mod:`screwdyn.algorithms.rnea`, :mod:`.aba <screwdyn.algorithms.aba>` and
:mod:`.crba <screwdyn.algorithms.crba>` with the lanes taken out: every number comes from the
same helper (``joint_pose``, ``body_motion``, ``body_wrench``, ``joint_force``,
``wrench_to_parent``, ``body_bias``, ``joint_pivot``, ``articulate``, ``joint_acceleration``,
``inertia_apply``, ``joint_row``, ...) in the same order, so a state gives the CPU kernels'
numbers to rounding (the CPU fuses where ``internals.HAS_FMA``; a GPU always fuses ``fma`` and
may contract other products). Nothing here uses numba's internals: numba-cuda compiles each
function, and the helpers it calls, as a device function (it recompiles a CPU dispatcher's
``py_func`` for the GPU, with its options), and numba-cuda's simulator runs them as Python.

Work arrays, one state (``n`` rows of the packed model; row ``n`` of an ``(n + 1, k)`` array is
the base, which the parent index ``-1`` reads)::

    RNEA   W (n, 12) poses T_{p,i};  V, A, F (n + 1, 6)
    ABA    R (n + 1, 9);  r (n, 3);  J, C, pA, U (n, 6);  V (n + 1, 6);  IA (n, 21);  Du (n, 2)
    CRBA   R (n + 1, 9);  r (n, 3);  J (n, 6);  Ic (n, 10)
"""

from ..algorithms.aba import articulate, body_bias, joint_acceleration, joint_pivot
from ..algorithms.crba import joint_row
from ..algorithms.inertia_kernels import articulated_shift, body_inertia, inertia_apply, inertia_rotate, inertia_shift, massless
from ..algorithms.joints import (
    ball_step, free_flyer_step, in_parent_frame, joint_dexp_inverse, joint_pose, joint_screw, joint_velocity, screw_half,
)
from ..algorithms.layout import ARMAT, BALL, FREE, GRAVITY, ONE_DOF, PARENT, POSEK, QIDX
from ..algorithms.rnea import body_motion, body_wrench, joint_force, joint_motion
from ..algorithms.spatial_kernels import (
    aligned, aligned_in_parent, rotate6, translate_twist, translate_wrench, wrench_to_parent,
)
from ..algorithms.target import HELPER, njit
from ..algorithms.status import Status

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
ZERO10 = (0.0,) * 10
EYE9 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
NONFINITE = int(Status.NONFINITE)
NONFINITE_FEXT = int(Status.NONFINITE_FEXT)
SINGULAR = int(Status.SINGULAR)
OVERFLOW = int(Status.OVERFLOW)


# ---------------------------------------------------------------------------------- rows as tuples
# ``get{k}(A, i)``: row i of a work array as a k-tuple; ``put{k}``, ``add{k}``: a tuple into it. Written
# out (a loop indexing a tuple would index it at run time).
def _row_functions(k):
    namespace = {}
    items = ", ".join(f"A[i, {c}]" for c in range(k))
    puts = "".join(f"    A[i, {c}] = t[{c}]\n" for c in range(k))
    adds = "".join(f"    A[i, {c}] += t[{c}]\n" for c in range(k))
    exec(f"def get{k}(A, i):\n    return ({items},)\n"
         f"def put{k}(A, i, t):\n{puts}"
         f"def add{k}(A, i, t):\n{adds}", namespace)
    options = {key: v for key, v in HELPER.items() if key != "cache"}   # (made by exec: no file to cache by)
    return tuple(njit(**options)(namespace[f"{verb}{k}"]) for verb in ("get", "put", "add"))


get3, put3, _ = _row_functions(3)
get6, put6, add6 = _row_functions(6)
get9, put9, _ = _row_functions(9)
get10, put10, add10 = _row_functions(10)
get12, put12, _ = _row_functions(12)
get21, put21, add21 = _row_functions(21)


@njit(**HELPER)
def nonfinite(x):
    """Whether the 1-D ``x`` holds a NaN or inf (``x * 0`` is NaN for those, 0 otherwise)."""
    s = 0.0
    for j in range(x.shape[0]):
        s += x[j] * 0.0
    return s != 0.0


@njit(**HELPER)
def nonfinite_rows(x):
    """:func:`nonfinite` for a 2-D ``x``."""
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s += x[i, j] * 0.0
    return s != 0.0


@njit(**HELPER)
def input_status(x0, x1, x2, fe, use_fe):
    """The status of a state's inputs: NONFINITE + a for the first of ``x0, x1, x2`` with a NaN or
    inf, NONFINITE_FEXT for the wrenches ``fe`` (when used), else 0."""
    if nonfinite(x0):
        return NONFINITE
    if nonfinite(x1):
        return NONFINITE + 1
    if nonfinite(x2):
        return NONFINITE + 2
    if use_fe and nonfinite_rows(fe):
        return NONFINITE_FEXT
    return 0


# ---------------------------------------------------------------------------------- RNEA
@njit(**HELPER)
def rnea_state(kd, q, qd, qdd, fe, use_fe, tau, W, V, A, F):
    """``tau = ID(q, qd, qdd, F_ext)`` of one state (:mod:`screwdyn.algorithms.rnea`, its two passes)."""
    n = kd.shape[0] - 1
    put6(V, n, ZERO6)
    put6(A, n, (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2]))
    put6(F, n, ZERO6)
    for i in range(n):                                             # Pass 1: motion and own wrench
        par = int(kd[i, PARENT])
        S = joint_screw(kd, i)
        if in_parent_frame(kd, i):
            Vi, Ai = joint_motion(get6(V, par), get6(A, par), S, ZERO6, qd[i], qdd[i])
            Fi = ZERO6 if massless(kd, i) else body_wrench(body_inertia(kd, i), Vi, Ai)
        else:
            T = joint_pose(kd, i, q)
            put12(W, i, T)
            Vi, Ai = body_motion(T, S, joint_velocity(kd, i, S, qd), qd[i], qdd[i], get6(V, par), get6(A, par))
            Fi = body_wrench(body_inertia(kd, i), Vi, Ai)
        put6(V, i, Vi)
        put6(A, i, Ai)
        put6(F, i, Fi)
        if use_fe:
            for c in range(6):
                F[i, c] -= fe[i, c]
    for i in range(n - 1, -1, -1):                                 # Pass 2: wrenches, tips to base
        par = int(kd[i, PARENT])
        G = get6(F, i)
        tau[i] = joint_force(joint_screw(kd, i), G, kd[i, ARMAT], qdd[i])
        add6(F, par, G if in_parent_frame(kd, i) else wrench_to_parent(get12(W, i), G))


# ---------------------------------------------------------------------------------- ABA
@njit(**HELPER)
def aba_state(kd, q, qd, tau, fe, use_fe, qdd, R, r, J, V, C, IA, pA, U, Du):
    """``qdd = FD(q, qd, tau, F_ext)`` of one state (:mod:`screwdyn.algorithms.aba`, its three
    passes). Returns 0, or SINGULAR (OVERFLOW) where some ``D_i`` is not positive (NaN)."""
    n = kd.shape[0] - 1
    put9(R, n, EYE9)
    put6(V, n, ZERO6)
    for i in range(n):                                             # Pass 1
        par = int(kd[i, PARENT])
        S = joint_screw(kd, i)
        I = body_inertia(kd, i)
        qdi = qd[i]
        if in_parent_frame(kd, i):
            Ri, ri, Ji = aligned_in_parent(get9(R, par), S)
            Vi = get6(V, par)
            Ci, IAi, pAi = body_bias(Ri, Ji, Vi, qdi, I, massless(kd, i))
        else:
            Ri, ri, Ji = aligned(get9(R, par), joint_pose(kd, i, q), S)
            if kd[i, POSEK] == ONE_DOF:
                vJ = (Ji[0] * qdi, Ji[1] * qdi, Ji[2] * qdi, Ji[3] * qdi, Ji[4] * qdi, Ji[5] * qdi)
            else:
                vJ = rotate6(Ri, joint_velocity(kd, i, S, qd))
            w0, w1, w2, v0, v1, v2 = translate_twist(ri, get6(V, par))
            Vi = (w0 + vJ[0], w1 + vJ[1], w2 + vJ[2], v0 + vJ[3], v1 + vJ[4], v2 + vJ[5])
            Ci, IAi, pAi = body_bias(Ri, Ji, Vi, qdi, I, False)
        put9(R, i, Ri)
        put3(r, i, ri)
        put6(J, i, Ji)
        put6(V, i, Vi)
        put6(C, i, Ci)
        put21(IA, i, IAi)
        put6(pA, i, pAi)
        if use_fe:
            e0, e1, e2, e3, e4, e5 = rotate6(Ri, get6(fe, i))
            add6(pA, i, (-e0, -e1, -e2, -e3, -e4, -e5))
    status = 0
    for i in range(n - 1, -1, -1):                                 # Pass 2
        par = int(kd[i, PARENT])
        Ui, d, u = joint_pivot(get21(IA, i), get6(J, i), get6(pA, i), tau[i], kd[i, ARMAT], 3 * screw_half(kd, i))
        put6(U, i, Ui)
        Du[i, 0] = d
        Du[i, 1] = u
        if not d > 0.0 and status == 0:
            status = SINGULAR if d <= 0.0 else OVERFLOW
        if par < 0:
            continue
        Ia, pa = articulate(get21(IA, i), Ui, d, u, get6(pA, i), get6(C, i))
        if in_parent_frame(kd, i):
            add21(IA, par, Ia)
            add6(pA, par, pa)
        else:
            ri = get3(r, i)
            add21(IA, par, articulated_shift(ri, Ia))
            add6(pA, par, translate_wrench(ri, pa))
    put6(V, n, (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2]))
    for i in range(n):                                             # Pass 3
        ap = get6(V, int(kd[i, PARENT]))
        h = ap if in_parent_frame(kd, i) else translate_twist(get3(r, i), ap)
        qddi, ai = joint_acceleration(h, get6(C, i), get6(U, i), Du[i, 1], Du[i, 0], get6(J, i))
        qdd[i] = qddi
        put6(V, i, ai)
    return status


# ---------------------------------------------------------------------------------- CRBA
@njit(**HELPER)
def crba_state(kd, q, M, R, r, J, Ic):
    """``M(q)`` of one state into ``M (n, n)`` (:mod:`screwdyn.algorithms.crba`, its two passes)."""
    n = kd.shape[0] - 1
    put9(R, n, EYE9)
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for i in range(n):                                             # Pass 1
        S = joint_screw(kd, i)
        I = body_inertia(kd, i)
        Rp = get9(R, int(kd[i, PARENT]))
        if in_parent_frame(kd, i):
            Ri, ri, Ji = aligned_in_parent(Rp, S)
            Ici = ZERO10 if massless(kd, i) else inertia_rotate(Ri, I)
        else:
            Ri, ri, Ji = aligned(Rp, joint_pose(kd, i, q), S)
            Ici = inertia_rotate(Ri, I)
        put9(R, i, Ri)
        put3(r, i, ri)
        put6(J, i, Ji)
        put10(Ic, i, Ici)
    for i in range(n - 1, -1, -1):                                 # Pass 2
        G = get10(Ic, i)
        Ji = get6(J, i)
        Fi = inertia_apply(G, Ji)
        M[i, i] = joint_row(Ji, Fi) + kd[i, ARMAT]
        j = i
        par = int(kd[j, PARENT])
        while par >= 0:
            if not in_parent_frame(kd, j):
                Fi = translate_wrench(get3(r, j), Fi)              # F = X_j^T F
            x = joint_row(get6(J, par), Fi)
            M[i, par] = x
            M[par, i] = x
            j = par
            par = int(kd[j, PARENT])
        par = int(kd[i, PARENT])
        if par >= 0:
            add10(Ic, par, G if in_parent_frame(kd, i) else inertia_shift(get3(r, i), G))


# ---------------------------------------------------------------------------------- one step
@njit(**HELPER)
def integrate_state(kd, q, v, dt, out):
    """``out = q (+) v dt`` of one state, joint by joint (:func:`.joints.joint_integrate`)."""
    n = kd.shape[0] - 1
    for i in range(n):
        pk = kd[i, POSEK]
        qi = int(kd[i, QIDX])
        if pk == ONE_DOF:
            out[qi] = q[qi] + dt * v[i]
        elif pk == FREE:
            free_flyer_step(q, v, qi, i, dt, out)
        elif pk == BALL:
            ball_step(q, v, qi, i, dt, out)


@njit(**HELPER)
def dexp_inverse_state(kd, K, c, V, OUT):
    """:func:`.joints.joint_dexp_inverse` of one state held as rows ``(1, nv)``."""
    joint_dexp_inverse(kd, K, c, V, OUT, 1)
