"""Forward kinematics, frame Jacobians and the bias term ``Jdot qd``.

Body poses in the base frame ``{0}``, forward (note 001's product of exponentials on a tree)::

    T_{0,i} = T_{0,p(i)} T_{p(i),i}(q_i),     T_{0,base} = 1

A frame ``f`` rides on body ``b`` at the constant pose ``T_{b,f}``: ``T_{0,f} = T_{0,b} T_{b,f}``.

Jacobians of frame ``f`` (``(omega, v)`` rows; column ``j`` nonzero only for the joints ``j``
on the path from the base to ``b``), three references::

    space          J_s[:, j] = [Ad_{T_{0,j}}] S_j          (Modern Robotics J_s: V_s = J_s qd)
    body           J_b = [Ad_{T_{f,0}}] J_s                 (J_b: the twist of {f} in {f})
    world_aligned  J_w = (omega_s, v_s + omega_s x p_f)     ({f}'s origin velocity, base axes;
                                                            Pinocchio's LOCAL_WORLD_ALIGNED)

``Jdot qd`` is ``d/dt (J qd)`` at ``qdd = 0``. From a forward pass with ``qdd = 0`` and no gravity,
``V_i = X_i V_p + S_i qd_i``, ``A_i = X_i A_p + [ad_{V_i}] S_i qd_i`` (the twist and its rate in
body ``i``'s frame, as in RNEA), and then for the frame (``T_{b,f}`` constant)::

    V_f = [Ad_{T_{f,b}}] V_b,   A_f = [Ad_{T_{f,b}}] A_b
    body           Jdot_b qd = A_f
    space          Jdot_s qd = [Ad_{T_{0,f}}] A_f
    world_aligned  Jdot_w qd = (R_0f omega_dot_f, R_0f (v_dot_f + omega_f x v_f))
                   (the classical acceleration of {f}'s origin, Pinocchio's classical acceleration)
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import pose_to_world, twist_to_world
from .joints import joint_transform, motion_subspace
from .layout import PARENT
from .rnea import nonfinite_code
from .spatial_kernels import bracket_add, twist_to_child
from .work import thread_chunks

SPACE = 0
BODY = 1
WORLD_ALIGNED = 2


@njit(cache=True, inline="always")
def world_poses(kd, q, R, p, Rw, pw):
    """``T_{0,i} = (Rw[i], pw[i])`` for every body; row ``n`` (index -1) is the base, ``1``."""
    n = kd.shape[0] - 1
    for a in range(3):
        for b in range(3):
            Rw[n, a, b] = 1.0 if a == b else 0.0
        pw[n, a] = 0.0
    for i in range(n):
        joint_transform(kd, i, q[i], R[i], p[i])
        pose_to_world(Rw[int(kd[i, PARENT])], pw[int(kd[i, PARENT])], R[i], p[i], Rw[i], pw[i])


@njit(cache=True, inline="always")
def frame_in_world(Rw, pw, Tbf, Rf, pf):
    """``T_{0,f} = T_{0,b} T_{b,f}`` into ``Rf (3,3)``, ``pf (3,)``."""
    for a in range(3):
        for b in range(3):
            Rf[a, b] = Rw[a, 0] * Tbf[0, b] + Rw[a, 1] * Tbf[1, b] + Rw[a, 2] * Tbf[2, b]
        pf[a] = Rw[a, 0] * Tbf[0, 3] + Rw[a, 1] * Tbf[1, 3] + Rw[a, 2] * Tbf[2, 3] + pw[a]


@njit(cache=True)
def poses_state(kd, q, fbody, fpose, out, R, p, Rw, pw):
    """Poses ``T_{0,f}`` of frames given by ``fbody (k,)`` and ``fpose (k, 4, 4)`` into ``out (k, 4, 4)``."""
    world_poses(kd, q, R, p, Rw, pw)
    for f in range(fbody.shape[0]):
        b = fbody[f]
        frame_in_world(Rw[b], pw[b], fpose[f], out[f, :3, :3], out[f, :3, 3])
        out[f, 3, 0] = 0.0
        out[f, 3, 1] = 0.0
        out[f, 3, 2] = 0.0
        out[f, 3, 3] = 1.0


@njit(cache=True)
def _pose_work(n):
    w = np.empty(12 * n + 12 * (n + 1))
    return (w[:9 * n].reshape((n, 3, 3)), w[9 * n:12 * n].reshape((n, 3)),
            w[12 * n:12 * n + 9 * (n + 1)].reshape((n + 1, 3, 3)), w[12 * n + 9 * (n + 1):].reshape((n + 1, 3)))


@njit(cache=True)
def poses(kd, q, fbody, fpose, out):
    """One state; returns 0 or 1 (NaN or inf in ``q``)."""
    code = nonfinite_code(q)
    if code:
        return code
    R, p, Rw, pw = _pose_work(kd.shape[0] - 1)
    poses_state(kd, q, fbody, fpose, out, R, p, Rw, pw)
    return 0


@njit(cache=True, parallel=True)
def poses_batch(kd, q, fbody, fpose, out, status):
    B = q.shape[0]
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        R, p, Rw, pw = _pose_work(kd.shape[0] - 1)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k])
            if status[k] == 0:
                poses_state(kd, q[k], fbody, fpose, out[k], R, p, Rw, pw)


@njit(cache=True, inline="always")
def change_reference(ref, Rf, pf, col):
    """A space-frame twist ``col`` re-expressed for reference ``ref`` (in place)."""
    if ref == SPACE:
        return
    w0, w1, w2 = col[0], col[1], col[2]
    u0 = col[3] + w1 * pf[2] - w2 * pf[1]       # v + w x p_f: velocity of the point p_f
    u1 = col[4] + w2 * pf[0] - w0 * pf[2]
    u2 = col[5] + w0 * pf[1] - w1 * pf[0]
    if ref == BODY:
        for c in range(3):
            col[c] = Rf[0, c] * w0 + Rf[1, c] * w1 + Rf[2, c] * w2
            col[3 + c] = Rf[0, c] * u0 + Rf[1, c] * u1 + Rf[2, c] * u2
    else:
        col[3] = u0
        col[4] = u1
        col[5] = u2


@njit(cache=True)
def jacobian_state(kd, q, body, Tbf, ref, J, R, p, Rw, pw, S, Rf, pf):
    """Jacobian ``J (6, n)`` of the frame at ``Tbf`` on ``body`` (-1: the base) for ``ref``."""
    n = kd.shape[0] - 1
    world_poses(kd, q, R, p, Rw, pw)
    frame_in_world(Rw[body], pw[body], Tbf, Rf, pf)
    for r in range(6):
        for c in range(n):
            J[r, c] = 0.0
    j = body
    while j >= 0:
        motion_subspace(kd, j, S)
        twist_to_world(Rw[j], pw[j], S, S[6:])                  # J_s[:, j] = Ad_{T_0j} S_j
        change_reference(ref, Rf, pf, S[6:])
        for r in range(6):
            J[r, j] = S[6 + r]
        j = int(kd[j, PARENT])


@njit(cache=True)
def _jac_work(n):
    R, p, Rw, pw = _pose_work(n)
    w = np.empty(24)
    return R, p, Rw, pw, w[:12], w[12:21].reshape((3, 3)), w[21:]


@njit(cache=True)
def jacobian(kd, q, body, Tbf, ref, J):
    """One state; returns 0 or 1 (NaN or inf in ``q``)."""
    code = nonfinite_code(q)
    if code:
        return code
    R, p, Rw, pw, S, Rf, pf = _jac_work(kd.shape[0] - 1)
    jacobian_state(kd, q, body, Tbf, ref, J, R, p, Rw, pw, S, Rf, pf)
    return 0


@njit(cache=True, parallel=True)
def jacobian_batch(kd, q, body, Tbf, ref, J, status):
    B = q.shape[0]
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        R, p, Rw, pw, S, Rf, pf = _jac_work(kd.shape[0] - 1)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k])
            if status[k] == 0:
                jacobian_state(kd, q[k], body, Tbf, ref, J[k], R, p, Rw, pw, S, Rf, pf)


@njit(cache=True)
def frame_motion_state(kd, q, qd, body, Tbf, ref, vel, acc, R, p, Rw, pw, S, V, A, Rf, pf):
    """Twist ``vel = J qd`` and bias ``acc = Jdot qd`` (6 each) of a frame, for ``ref``.
    Work: ``S (6,)``, ``V, A (n+1, 6)`` (base last), ``Rf (3,3)``, ``pf (6,)``."""
    n = kd.shape[0] - 1
    for c in range(6):
        V[n, c] = 0.0
        A[n, c] = 0.0
    world_poses(kd, q, R, p, Rw, pw)
    for i in range(n):
        par = int(kd[i, PARENT])
        motion_subspace(kd, i, S)
        twist_to_child(R[i], p[i], V[par], V[i])                 # V_i = X_i V_p + S_i qd_i
        twist_to_child(R[i], p[i], A[par], A[i])                 # A_i = X_i A_p + [ad_V_i] S_i qd_i
        for c in range(6):
            V[i, c] += S[c] * qd[i]
        bracket_add(V[i], S, qd[i], A[i])
    frame_in_world(Rw[body], pw[body], Tbf, Rf, pf)
    twist_to_child(Tbf[:3, :3], Tbf[:3, 3], V[body], vel)        # V_f = Ad_{T_fb} V_b
    twist_to_child(Tbf[:3, :3], Tbf[:3, 3], A[body], acc)        # A_f = Ad_{T_fb} A_b
    if ref == BODY:
        return
    if ref == SPACE:
        for c in range(6):
            S[c] = vel[c]
        twist_to_world(Rf, pf, S, vel)
        for c in range(6):
            S[c] = acc[c]
        twist_to_world(Rf, pf, S, acc)
        return
    # world aligned: (R w, R v) and (R wdot, R (vdot + w x v))
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    S[0], S[1], S[2] = acc[0], acc[1], acc[2]
    S[3] = acc[3] + w1 * v2 - w2 * v1
    S[4] = acc[4] + w2 * v0 - w0 * v2
    S[5] = acc[5] + w0 * v1 - w1 * v0
    for a in range(3):
        vel[a] = Rf[a, 0] * w0 + Rf[a, 1] * w1 + Rf[a, 2] * w2
        vel[3 + a] = Rf[a, 0] * v0 + Rf[a, 1] * v1 + Rf[a, 2] * v2
        acc[a] = Rf[a, 0] * S[0] + Rf[a, 1] * S[1] + Rf[a, 2] * S[2]
        acc[3 + a] = Rf[a, 0] * S[3] + Rf[a, 1] * S[4] + Rf[a, 2] * S[5]


@njit(cache=True)
def _motion_work(n):
    R, p, Rw, pw = _pose_work(n)
    w = np.empty(6 + 12 * (n + 1) + 12)
    o = 6 + 12 * (n + 1)
    return (R, p, Rw, pw, w[:6], w[6:6 + 6 * (n + 1)].reshape((n + 1, 6)), w[6 + 6 * (n + 1):o].reshape((n + 1, 6)),
            w[o:o + 9].reshape((3, 3)), w[o + 9:])


@njit(cache=True)
def frame_motion(kd, q, qd, body, Tbf, ref, vel, acc):
    """One state; returns 0, or 1/2 (NaN or inf in q/qd)."""
    code = nonfinite_code(q, qd)
    if code:
        return code
    R, p, Rw, pw, S, V, A, Rf, pf = _motion_work(kd.shape[0] - 1)
    frame_motion_state(kd, q, qd, body, Tbf, ref, vel, acc, R, p, Rw, pw, S, V, A, Rf, pf)
    return 0


@njit(cache=True, parallel=True)
def frame_motion_batch(kd, q, qd, body, Tbf, ref, vel, acc, status):
    B = q.shape[0]
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        R, p, Rw, pw, S, V, A, Rf, pf = _motion_work(kd.shape[0] - 1)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k], qd[k])
            if status[k] == 0:
                frame_motion_state(kd, q[k], qd[k], body, Tbf, ref, vel[k], acc[k], R, p, Rw, pw, S, V, A, Rf, pf)
