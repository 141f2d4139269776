"""Forward kinematics, frame Jacobians and the bias term ``Jdot qd`` (docs/theory.md §5).

Body poses in the base frame, forward (the product of exponentials on a tree)::

    T_{0,i} = T_{0,p(i)} T_{p(i),i}(q_i),     T_{0,base} = 1

A frame ``f`` rides on body ``b`` at the constant pose ``T_{b,f}``: ``T_{0,f} = T_{0,b} T_{b,f}``.

Jacobians of frame ``f`` (``(omega, v)`` rows; column ``j`` nonzero only for the joints ``j`` on
the path from the base to ``b``), three references::

    space          J_s[:, j] = [Ad_{T_{0,j}}] S_j          (Modern Robotics' J_s: V_s = J_s qd)
    body           J_b = [Ad_{T_{f,0}}] J_s                 (the twist of {f} in {f})
    world_aligned  J_w = (omega_s, v_s + omega_s x p_f)     ({f}'s origin velocity in base axes;
                                                            Pinocchio's LOCAL_WORLD_ALIGNED)

``Jdot qd`` is ``d/dt (J qd)`` at ``qdd = 0``: RNEA's forward pass (:func:`.rnea.body_motion`)
with ``qdd = 0`` and no gravity gives each body's twist ``V_i`` and its rate ``A_i`` in its own
frame, and then for the frame (``T_{b,f}`` constant)::

    V_f = [Ad_{T_{f,b}}] V_b,   A_f = [Ad_{T_{f,b}}] A_b
    body           Jdot_b qd = A_f
    space          Jdot_s qd = [Ad_{T_{0,f}}] A_f
    world_aligned  Jdot_w qd = (R_0f omega_dot_f, R_0f (v_dot_f + omega_f x v_f))
                   (the classical acceleration of {f}'s origin)

The kernels take one state at a time (:mod:`.work`): the world poses in a work array, then the
frame's quantities.
"""
import numpy as np
from numba import prange

from .internals import release_gil, restore_gil, stack, window
from .joints import joint_pose, joint_screw, joint_velocity
from .layout import PARENT
from .rnea import body_motion
from .spatial_kernels import compose, cross, rotate6, translate_twist, twist_to_child, twist_to_world
from .entry import I64, Entry, array
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, get12, is_rows, is_vector, one_state, overflowed, q_size, put, row, units

# one-state calls release the GIL from this many DoF (below, a call takes under 1 us; internals.release_gil)
GIL_FROM = 100

SPACE = 0
BODY = 1
WORLD_ALIGNED = 2


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies (poses, motions, the path to a frame)."""
    return 25 * (n + 1) + 12


@njit(**HELPER)
def pose12(T):
    """The twelve numbers of a 4x4 homogeneous matrix."""
    return (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2], T[0, 3], T[1, 3],
            T[2, 3])


@njit(**HELPER)
def world_poses(kd, q, Tw):
    """``T_{0,i}`` of every body into ``Tw (n + 1, 12, 1)``; row ``n`` (the parent index -1) is the base."""
    n = kd.shape[0] - 1
    put(Tw[n], 0, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    for i in range(n):
        put(Tw[i], 0, compose(get12(Tw[int(kd[i, PARENT])], 0), joint_pose(kd, i, q)))


@njit(**HELPER)
def ancestry(kd, body, path):
    """``body`` and its ancestors into ``path (n,)``, the base's child first; returns how many (0 for
    the base, ``body = -1``). A frame's Jacobian or motion needs only these bodies (Talos' hand: 10 of
    44)."""
    m = 0
    j = body
    while j >= 0:
        m += 1
        j = int(kd[j, PARENT])
    j = body
    for t in range(m - 1, -1, -1):
        path[t] = j
        j = int(kd[j, PARENT])
    return m


@njit(**HELPER)
def path_poses(kd, q, path, m, Tw):
    """``T_{0,i}`` of the bodies ``path[:m]`` (each after its parent: :func:`ancestry`) into ``Tw``,
    whose row ``n`` holds the base's identity; the other rows are left as they are."""
    for t in range(m):
        i = path[t]
        put(Tw[i], 0, compose(get12(Tw[int(kd[i, PARENT])], 0), joint_pose(kd, i, q)))


@njit(**HELPER)
def in_reference(ref, Tf, V):
    """A twist ``V`` of the space frame, for reference ``ref`` at the frame ``T_{0,f} = Tf``."""
    if ref == BODY:
        return twist_to_child(Tf, V)             # [Ad_{T_{f,0}}] V
    if ref == WORLD_ALIGNED:
        return translate_twist((Tf[9], Tf[10], Tf[11]), V)   # (w, v + w x p_f)
    return V


@njit(**KERNEL)
def poses(kd, q, fbody, fpose, out, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, n)``: poses ``T_{0,f}`` of the frames ``fbody (k,)`` at
    ``fpose (k, 4, 4)`` on their bodies into ``out (B, k, 4, 4)`` (one frame: the poses of its
    body's ancestors only)."""
    n = kd.shape[0] - 1
    Tw = stack((n + 1, 12, 1))
    path = stack((n + 1,)).view(np.int64)
    one = fbody.shape[0] == 1
    m = ancestry(kd, fbody[0], path) if one else 0
    put(Tw[n], 0, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        if status[k]:
            continue
        if one:
            path_poses(kd, q[k], path, m, Tw)
        else:
            world_poses(kd, q[k], Tw)
        for f in range(fbody.shape[0]):
            T = compose(get12(Tw[fbody[f]], 0), pose12(fpose[f]))
            for a in range(3):
                out[k, f, a, 0], out[k, f, a, 1], out[k, f, a, 2] = T[3 * a], T[3 * a + 1], T[3 * a + 2]
                out[k, f, a, 3] = T[9 + a]
                out[k, f, 3, a] = 0.0
            out[k, f, 3, 3] = 1.0
        overflowed(status, k, out)


@njit(**KERNEL)
def jacobian(kd, q, body, Tbf, ref, J, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, n)``: the Jacobian ``J (B, 6, n)`` of the frame at
    ``Tbf (4, 4)`` on ``body`` (-1: the base) for reference ``ref``."""
    n = kd.shape[0] - 1
    Tw = stack((n + 1, 12, 1))
    path = stack((n + 1,)).view(np.int64)
    m = ancestry(kd, body, path)
    put(Tw[n], 0, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        if status[k]:
            continue
        path_poses(kd, q[k], path, m, Tw)                  # T_{0,i} along the path only
        Tf = compose(get12(Tw[body], 0), pose12(Tbf))
        for r in range(6):
            for c in range(n):
                J[k, r, c] = 0.0
        j = body
        while j >= 0:
            col = in_reference(ref, Tf, twist_to_world(get12(Tw[j], 0), joint_screw(kd, j)))   # Ad_{T_0j} S_j
            for r in range(6):
                J[k, r, j] = col[r]
            j = int(kd[j, PARENT])
        overflowed(status, k, J)


@njit(**KERNEL)
def frame_motion(kd, q, qd, body, Tbf, ref, vel, acc, status, k0, k1):
    """States ``k0 <= k < k1``: the twist ``vel[k] = J qd`` and the bias ``acc[k] = Jdot qd``
    (``(B, 6)`` each) of the frame at ``Tbf`` on ``body`` for reference ``ref``."""
    n = kd.shape[0] - 1
    Tw = stack((n + 1, 12, 1))
    V = stack((n + 1, 12, 1))   # V_i, then A_i; row n: the base at rest
    path = stack((n + 1,)).view(np.int64)
    m = ancestry(kd, body, path)
    put(Tw[n], 0, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    put(V[n], 0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        check(status, k, Status.NONFINITE + 1, qd[k])
        if status[k]:
            continue
        for t in range(m):                                 # along the path only
            i = path[t]
            Tp = joint_pose(kd, i, q[k])
            put(Tw[i], 0, compose(get12(Tw[int(kd[i, PARENT])], 0), Tp))
            Vp = get12(V[int(kd[i, PARENT])], 0)
            S = joint_screw(kd, i)
            Vi, Ai = body_motion(Tp, S, joint_velocity(kd, i, S, qd[k]), qd[k, i], 0.0, Vp[:6], Vp[6:])
            put(V[i], 0, Vi + Ai)
        Tb = pose12(Tbf)
        Vb = get12(V[body], 0)
        Vf, Af = twist_to_child(Tb, Vb[:6]), twist_to_child(Tb, Vb[6:])    # Ad_{T_{f,b}}
        if ref == BODY:
            v, a = Vf, Af
        else:
            Tf = compose(get12(Tw[body], 0), Tb)
            if ref == SPACE:
                v, a = twist_to_world(Tf, Vf), twist_to_world(Tf, Af)
            else:                                         # (R w, R v) and (R wdot, R (vdot + w x v))
                R = (Tf[0], Tf[1], Tf[2], Tf[3], Tf[4], Tf[5], Tf[6], Tf[7], Tf[8])
                c0, c1, c2 = cross(Vf[:3], Vf[3:])
                v, a = rotate6(R, Vf), rotate6(R, (Af[0], Af[1], Af[2], Af[3] + c0, Af[4] + c1, Af[5] + c2))
        for c in range(6):
            vel[k, c] = v[c]
            acc[k, c] = a[c]
        overflowed(status, k, vel)
        overflowed(status, k, acc)


@njit(**ONE)
def poses_one(kd, q, fbody, fpose, out):
    """One state: :func:`poses` on it as a batch of one."""
    if not (is_vector(q, q_size(kd)) and out.shape[0] == fbody.shape[0] and out.shape[1] == 4 and out.shape[2] == 4):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(kd.shape[0] - 1 >= GIL_FROM)   # a long call lets other threads run
    poses(kd, row(q), fbody, fpose, window(out, 0, (1, out.shape[0], 4, 4)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def jacobian_one(kd, q, body, Tbf, ref, J):
    """One state: :func:`jacobian` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and J.shape[0] == 6 and J.shape[1] == n):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    jacobian(kd, row(q), body, Tbf, ref, window(J, 0, (1, 6, n)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def frame_motion_one(kd, q, qd, body, Tbf, ref, vel, acc):
    """One state: :func:`frame_motion` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and vel.shape[0] == 6 and acc.shape[0] == 6):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    frame_motion(kd, row(q), row(qd), body, Tbf, ref, window(vel, 0, (1, 6)), window(acc, 0, (1, 6)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def poses_batch(kd, q, fbody, fpose, out, status):
    """States ``q (B, n)`` over numba's threads."""
    B = q.shape[0]
    if not is_rows(q, B, q_size(kd)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            poses(kd, q, fbody, fpose, out, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def jacobian_batch(kd, q, body, Tbf, ref, J, status):
    """States ``q (B, n)`` over numba's threads."""
    B = q.shape[0]
    if not is_rows(q, B, q_size(kd)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            jacobian(kd, q, body, Tbf, ref, J, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def frame_motion_batch(kd, q, qd, body, Tbf, ref, vel, acc, status):
    """States ``q, qd (B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            frame_motion(kd, q, qd, body, Tbf, ref, vel, acc, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {
    "poses": Entry("frame poses", poses_one, poses_batch, ("q",), (3,), per_lane,
                   params=(array(1, dtype=I64), array(3))),
    "jacobian": Entry("a Jacobian", jacobian_one, jacobian_batch, ("q",), (2,), per_lane,
                      params=(I64, array(2), I64)),
    "frame_motion": Entry("a frame's motion", frame_motion_one, frame_motion_batch, ("q", "qd"), (1, 1), per_lane,
                          params=(I64, array(2), I64)),
}
