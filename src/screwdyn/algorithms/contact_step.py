"""One time step with contacts, joint limits, joint dry friction and bilateral constraints
(docs/theory.md §18): the velocity-level, semi-implicit Euler scheme of MuJoCo, Drake's and
Simple's time stepping, with the constraints solved together as one complementarity problem
on the exact Coulomb cone.

From ``(q, v)`` with the torque ``tau`` and the wrenches ``F`` held over the step ``dt``::

    1  T_0i = forward kinematics;  contacts = collide(T)                 (:mod:`.collide`)
    2  M + dt B = L^T D L (CRBA; B the joints' viscous damping, implicit, as MuJoCo's Euler),
       h = RNEA(q, v, 0, F),  f = sat(tau) - h
    3  rows J (m, nv): the bilateral constraints (their kinds, :mod:`.constraint_kinds`), each
       contact's normal and tangents (the relative velocity of A's point to B's at the contact
       point, in the contact frame), each joint near a limit, each joint with dry friction
    4  X = L^-T J^T,  G = J (M + dt B)^-1 J^T,   y = L^-T dt f,   u_free = J (v + c) + X D^-1 y
    5  the problem of :mod:`.ncp`: w = (G + R) lam + u_free + b, lam in K, complementarity
       (of the contacts detected within their margin, those that can close in the step:
       :func:`keep_closing`)
    6  v' = v + c + L^-1 D^-1 (y + X^T lam),   q' = q (+) dt v'          (semi-implicit Euler)

(with ``B = 0``, ``(M + dt B)`` is ``M`` and this is exactly velocity-level semi-implicit Euler; with
damping, ``(M + dt B) v' = M v + dt f + J^T lam``: the damping torque ``-B v'`` at the step's end)

where a free-flyer moves on SO(3) x R^3 in its frame at the start of the step, its twist carried
into the new frame at the end (:func:`.joints.joint_integrate_decoupled`), and ``c = dt (0, omega x
v)`` on its rows (:func:`.joints.frame_drift`) makes its velocity update the classical one.

The rows' biases ``b`` and compliances ``R`` (the target velocities, docs/theory.md §18.2), with
``phi`` a contact's distance less its margin (a joint's distance to its limit), ``d = G_rr``::

    rigid contact or limit     R = 0,  b = phi / dt (phi >= 0: it closes the gap in one step,
                               no further; a speculative contact),  beta phi / dt (phi < 0)
    compliant (k, c)           R = d / (dt (dt k + c)),  b = k phi / (dt k + c)  (an implicit
                               spring-damper of stiffness k / d and damping c / d; k, c per unit
                               of the row's effective mass, as MuJoCo's solref)
    restitution e              b = e u_n (u_n < -bounce and phi + dt u_n < 0: the contact closes
                               at the approach speed u_n = J_n v; it leaves at -e u_n)
    joint dry friction         a BOX row, |lam| <= dt f_c,  b = 0
    bilateral                  b = -(1 - dt Kd) J v + dt Kp e   (the constraint's Baumgarte gains;
                               both zero: Kd = 1/dt, Kp = beta_b / dt^2, J v' = -beta_b e / dt)

Arrays (``K`` contact rows a state, ``n = nv``)::

    S     (SETTINGS,)     DT, TOL, MAX_ITER, BETA, BETA_BILATERAL, BOUNCE, COMPLIANCE (RIGID,
                          SOLREF: each contact's solref, GIVEN: STIFFNESS, DAMPING for all)
    rec   (K, REC_WIDTH)  the contacts of the step (rows after the count: BODY = -1), see below
    jf    (2, n)          the joint-limit torques (row 0) and dry-friction torques (row 1) [N m, N]
    bl    (mb,)           the bilateral constraints' forces (in their references, :mod:`.constraint_layout`)
    info  (INFO_WIDTH,)   ITERATIONS, RESIDUAL (the solver's, a velocity), RHO, FOUND (contacts
                          found, more than K when rows were dropped), ROWS (m), CONTACTS (min(found, K))

A contact record (``rec[k]``, in the world frame; side A a body of the model, side B the world
or, in self-collision, another body)::

    0        BODY         A's body (``model.link_names`` index), -1: no contact in this row
    1        OTHER        B's body, -1: the world
    2        GEOM         A's geometry (index in ``model.collisions``)
    3        OBSTACLE     B's: index in ``model.collisions``, or ``-1 - k``: obstacle k of the environment
    4:7      POINT        the contact point [m]
    7:10     NORMAL       unit normal from B into A
    10       PENETRATION  depth [m]: ``-DIST`` of :mod:`.collide` (negative: a gap, a speculative contact)
    11:14    FORCE        the force on A [N] (on B the opposite), at POINT
    14:17    LOCAL        the same force in the contact frame: normal, tangent 1, tangent 2 [N]
    17, 18   PAIR, SLOT   the candidate pair and the contact's index among its contacts (the warm start's key)

The previous step's ``rec``, ``jf`` and ``bl`` are the warm start (forces times ``dt``).
"""
import math

import numpy as np

from .collide import (
    BODY_A, BODY_B, CONDIM, DIST, G_ROW, GEOM_A, GEOM_B, MARGIN, MU, NORMAL as C_NORMAL, P_A, P_B, PAIR, POS,
    RESTITUTION, SCRATCH, SLOT, SOLIMP, SOLREF, TANGENT1, TANGENT2, collide_state,
)
from .collide import WIDTH as C_WIDTH
from .cone import BOX, FREE, NORMAL, TANGENT, UNILATERAL
from .constraint_kinds import (
    constraint_frames, constraint_gains, constraint_row, constraint_size, error_rows, jacobian_rows,
)
from .constraint_layout import CBODY_A, CBODY_B, CKIND, CPOSE_A, CPOSE_B, CREF, CROW, CSIZE, CWIDTH, POINT, WORLD
from .crba import crba
from .internals import stack, window
from .joints import dof_position, frame_drift, joint_integrate_decoupled
from .kinematics import world_poses
from .kkt import delassus_of, rows_times_inverse_lt, solve_lower_from_scaled, vector_times_inverse_lt
from .layout import PARENT
from .ltdl import ltdl_factor
from .narrowphase import MAX_PAIR, PC_WIDTH
from .ncp import WORK_ROWS, admm
from .rnea import rnea
from .rollout import COULOMB, DAMPING, LOWER, STIFFNESS, UPPER, VISCOUS, saturate
from .status import Status
from .target import HELPER, INLINE, KERNEL, njit
from .work import check, q_size

# a contact farther than it can close within the step by this much is left out of the problem [m]
# (a rounded foot's other hull vertices, a millimetre or two up; a flat sole's corners are kept)
REACH = 5e-4

# settings
DT, TOL, MAX_ITER, BETA, BETA_BILATERAL, BOUNCE, COMPLIANCE, C_STIFFNESS, C_DAMPING = 0, 1, 2, 3, 4, 5, 6, 7, 8
SETTINGS = 9
RIGID, SOLREF_MODE, GIVEN = 0, 1, 2

# contact records
BODY, OTHER, GEOM, OBSTACLE, POINT_, NORMAL_, PENETRATION, FORCE, LOCAL, PAIR_, SLOT_ = \
    0, 1, 2, 3, 4, 7, 10, 11, 14, 17, 18
REC_WIDTH = 19

# info
ITERATIONS, RESIDUAL, RHO, FOUND, ROWS, CONTACTS = 0, 1, 2, 3, 4, 5
INFO_WIDTH = 6

# rows of the per-row vectors (``vec``)
V_G, V_R, V_KIND, V_PARAM, V_LAM, V_JV, V_JOINT = 0, 1, 2, 3, 4, 5, 6
VEC_ROWS = 7


@njit(**HELPER)
def max_rows(K, mb, lim):
    """The most rows a state's problem can have: ``mb`` bilateral, three a contact, a row for each
    joint with a finite limit and one for each joint with dry friction."""
    m = mb + 3 * K
    for i in range(lim.shape[0]):
        m += (lim[i, LOWER] > -math.inf or lim[i, UPPER] < math.inf) + (lim[i, COULOMB] > 0.0)
    return m


@njit(**HELPER)
def compliance(dt, k, c, d, phi):
    """``(R, b)`` of a compliant row of stiffness ``k`` and damping ``c`` (per unit of effective
    mass ``1 / d``) at distance ``phi`` (module docstring)."""
    s = dt * k + c
    return d / (dt * s), k * phi / s


@njit(**HELPER)
def solref_constants(dt, solref0, solref1, dmax):
    """MuJoCo's ``solref`` as ``(k, c)``: ``(timeconst, dampratio)`` gives ``k = 1 / (dmax tc zeta)^2``,
    ``c = 2 / (dmax tc)`` with ``tc = max(timeconst, 2 dt)``; ``(-stiffness, -damping)`` gives
    ``k = stiffness / dmax^2``, ``c = damping / dmax`` (``dmax`` the impedance, solimp's second entry)."""
    d = min(max(dmax, 1e-4), 0.9999)
    if solref0 > 0.0:
        tc = max(solref0, 2.0 * dt)
        return 1.0 / (d * d * tc * tc * solref1 * solref1), 2.0 / (d * tc)
    return -solref0 / (d * d), -solref1 / d


@njit(**HELPER)
def unilateral_target(S, dt, phi, d, k, c):
    """``(R, b)`` of a contact's normal row or a limit's row at distance ``phi``: rigid when
    ``k = c = 0`` (module docstring)."""
    if k > 0.0 or c > 0.0:
        return compliance(dt, k, c, d, phi)
    return 0.0, (phi if phi >= 0.0 else S[BETA] * phi) / dt


@njit(**HELPER)
def contact_constraint(cd, c, row, body_a, body_b, Tw, p):
    """Row ``c`` of the packed constraints ``cd`` made a world-aligned POINT constraint between the
    kernel rows ``body_a`` and ``body_b`` (-1: the world) at the world point ``p``, its rows from
    ``row`` (:mod:`.constraint_layout`): ``T_{a, ca} = T_{0,a}^-1 (1, p)``."""
    for j in range(cd.shape[1]):
        cd[c, j] = 0.0
    cd[c, CKIND], cd[c, CREF] = POINT, WORLD
    cd[c, CBODY_A], cd[c, CBODY_B] = body_a, body_b
    cd[c, CROW], cd[c, CSIZE] = row, 3
    n = Tw.shape[0] - 1
    for side in range(2):
        b = body_a if side == 0 else body_b
        col = CPOSE_A if side == 0 else CPOSE_B
        T = Tw[b if b >= 0 else n]
        d0, d1, d2 = p[0] - T[9, 0], p[1] - T[10, 0], p[2] - T[11, 0]
        for i in range(3):
            for j in range(3):
                cd[c, col + 3 * i + j] = T[3 * j + i, 0]      # R^T
            cd[c, col + 9 + i] = T[i, 0] * d0 + T[3 + i, 0] * d1 + T[6 + i, 0] * d2


@njit(**HELPER)
def to_contact_frame(C, k, J, r0):
    """The rows ``r0 .. r0 + 2`` of ``J`` (a point's velocity in world axes) turned into the contact
    frame of contact ``k``: normal, tangent 1, tangent 2 (``C[k]``'s rows 7:16)."""
    for j in range(J.shape[1]):
        x, y, z = J[r0, j], J[r0 + 1, j], J[r0 + 2, j]
        J[r0, j] = C[k, C_NORMAL] * x + C[k, C_NORMAL + 1] * y + C[k, C_NORMAL + 2] * z
        J[r0 + 1, j] = C[k, TANGENT1] * x + C[k, TANGENT1 + 1] * y + C[k, TANGENT1 + 2] * z
        J[r0 + 2, j] = C[k, TANGENT2] * x + C[k, TANGENT2 + 1] * y + C[k, TANGENT2 + 2] * z


@njit(**HELPER)
def warm_contact(C, k, wrec, dt):
    """The impulses ``(n, t1, t2)`` of the last step's contact with the same pair and slot as
    contact ``k`` of ``C`` (zero when there is none)."""
    p, s = C[k, PAIR], C[k, SLOT]
    for r in range(wrec.shape[0]):
        if wrec[r, BODY] < 0.0:
            break
        if wrec[r, PAIR_] == p and wrec[r, SLOT_] == s:
            return wrec[r, LOCAL] * dt, wrec[r, LOCAL + 1] * dt, wrec[r, LOCAL + 2] * dt
    return 0.0, 0.0, 0.0


@njit(**HELPER)
def keep_closing(C, J, r0, nc, v, dv, dt):
    """Keep the contacts that can close within the step, moved to the front of ``C`` and of the
    rows of ``J`` from ``r0`` (three a contact, the normal's first); returns how many. A contact at
    distance ``phi > 0`` (less its margin) is kept when ``phi <= dt max(0, -u_n, -u_n') + REACH``,
    ``u_n = J_n v`` its normal velocity and ``u_n' = J_n (v + dv)`` without contact forces
    (``dv = M^-1 dt f``): a rounded foot's other hull vertices a few millimetres up, detected within
    the margin, would add rows that stay at zero."""
    kept = 0
    for k in range(nc):
        r = r0 + 3 * k
        phi = C[k, DIST] - C[k, MARGIN]
        u, uf = 0.0, 0.0
        for j in range(J.shape[1]):
            u += J[r, j] * v[j]
            uf += J[r, j] * (v[j] + dv[j])
        if phi <= dt * max(0.0, max(-u, -uf)) + REACH:
            if kept != k:
                for c in range(C.shape[1]):
                    C[kept, c] = C[k, c]
                for e in range(3):
                    for j in range(J.shape[1]):
                        J[r0 + 3 * kept + e, j] = J[r + e, j]
            kept += 1
    return kept


@njit(**HELPER)
def joint_row(J, r, i, sign):
    for j in range(J.shape[1]):
        J[r, j] = 0.0
    J[r, i] = sign


@njit(**KERNEL)
def step_state(kd, q, v, tau, fext, use_fext, narrow, geoms, pairs, vertices, graph, cd, lim, S, wrec, wjf, wbl, qn, vn,
               rec, jf, bl, info, work):
    """One step of one state (module docstring): ``q (1, nq)``, ``v``, ``tau (1, n)``, ``fext (1, n,
    6)`` to ``qn (1, nq)``, ``vn (1, n)``, with the records ``rec``, ``jf``, ``bl``, ``info``;
    ``wrec``, ``wjf``, ``wbl`` the last step's (the warm start). ``narrow``: the narrow
    phase (:func:`.collide.ground_pair` or ``general_pair``; ``graph`` the polytopes' vertex
    graphs); ``cd (ncd, width)``: the
    bilateral constraints (:mod:`.constraint_layout`). ``work``: the tuple of :func:`carve`.
    Returns a :class:`.status.Status`."""
    Tw, Gw, pc, scratch, Cc, H3, h, zero, one, par, ccd, J, Y, nz, cnt, mark, Gd, Cf, Af, vec, sw, y = work
    n = kd.shape[0] - 1
    K = Cc.shape[0]
    dt = S[DT]
    H = H3[0]
    # 1. kinematics and contacts
    world_poses(kd, q[0], Tw)
    found = collide_state(narrow, Tw, geoms, pairs, vertices, graph, Gw, pc, scratch, Cc)
    nc = min(found, K)
    # 2. M and the bias forces; f = sat(tau) - b v - h; y = L^-T dt f
    rnea(kd, q, v, zero, fext, use_fext, h, one, 0, 1, 1)
    if one[0]:
        return one[0]
    crba(kd, q, H3, one, 0, 1, 1)
    if one[0]:
        return one[0]
    for i in range(n):
        par[i] = int(kd[i, PARENT])
        H[i, i] += dt * lim[i, VISCOUS]            # M + h B: the joints' viscous damping implicit
    code = ltdl_factor(par, H)
    if code:
        return code
    for i in range(n):
        y[i] = dt * (saturate(lim, i, tau[0, i]) - h[0, i])
    vector_times_inverse_lt(par, H, y)
    for i in range(n):
        vn[0, i] = y[i]
    solve_lower_from_scaled(par, H, vn[0])          # M^-1 dt f: v_free - v
    # 3. the rows: bilateral, contacts, joints
    ncd = cd.shape[0]
    mb = 0
    for c in range(ncd):
        for j in range(cd.shape[1]):
            ccd[c, j] = cd[c, j]
        mb = max(mb, constraint_row(cd, c) + constraint_size(cd, c))
    g, R, kind, param = vec[V_G], vec[V_R], vec[V_KIND], vec[V_PARAM]
    lam, jv, jrow = vec[V_LAM], vec[V_JV], vec[V_JOINT]
    for k in range(nc):
        pa, pb = int(pairs[int(Cc[k, PAIR]), P_A]), int(pairs[int(Cc[k, PAIR]), P_B])
        contact_constraint(ccd, ncd + k, mb + 3 * k, int(geoms[pa, G_ROW]), int(geoms[pb, G_ROW]), Tw,
                           (Cc[k, POS], Cc[k, POS + 1], Cc[k, POS + 2]))
    for c in range(ncd + nc):
        jacobian_rows(kd, ccd, c, Tw, J)
    for k in range(nc):
        to_contact_frame(Cc, k, J, mb + 3 * k)
    nc = keep_closing(Cc, J, mb, nc, v[0], vn[0], dt)
    m = mb + 3 * nc
    for i in range(n):
        qi = dof_position(kd, i)
        reach = dt * (abs(v[0, i]) + abs(v[0, i] + vn[0, i]))
        if qi >= 0:
            lo, hi = q[0, qi] - lim[i, LOWER], lim[i, UPPER] - q[0, qi]
            if lo < reach or hi < reach:
                sign = 1.0 if lo <= hi else -1.0
                joint_row(J, m, i, sign)
                jrow[m] = sign * (i + 1)
                kind[m] = UNILATERAL
                param[m] = min(lo, hi)               # (its distance, for the bias below)
                m += 1
        if lim[i, COULOMB] > 0.0:
            joint_row(J, m, i, 1.0)
            jrow[m] = i + 1
            kind[m] = BOX
            param[m] = dt * lim[i, COULOMB]
            m += 1
    frame_drift(kd, v[0], dt, h[0])                 # (h is free again: the drift c of a free-flyer)
    for r in range(m):
        acc, acc_c = 0.0, 0.0
        for j in range(n):
            acc += J[r, j] * v[0, j]
            acc_c += J[r, j] * h[0, j]
        jv[r] = acc
        g[r] = acc_c
    # 4. X = L^-T J^T, G = J M^-1 J^T, u_free = J v + X D^-1 y
    rows_times_inverse_lt(par, H, J, m, nz, cnt, mark)
    delassus_of(H, J, Y, m, nz, cnt, Gd)
    for r in range(m):
        acc = jv[r] + g[r]
        for t in range(cnt[r]):
            acc += Y[r, nz[r, t]] * y[nz[r, t]]
        g[r] = acc
    # 5. kinds, biases, compliances, warm starts
    beta_b = S[BETA_BILATERAL]
    for c in range(ncd):
        Kp, Kd = constraint_gains(cd, c)
        if Kp == 0.0 and Kd == 0.0:
            Kp, Kd = beta_b / (dt * dt), 1.0 / dt
        Ta, Tb = constraint_frames(cd, c, Tw)
        e = error_rows(cd, c, Ta, Tb, q[0])
        r0 = constraint_row(cd, c)
        for r in range(constraint_size(cd, c)):
            g[r0 + r] += -(1.0 - dt * Kd) * jv[r0 + r] + dt * Kp * e[r]
            R[r0 + r], kind[r0 + r], param[r0 + r] = 0.0, FREE, 0.0
            lam[r0 + r] = wbl[r0 + r] * dt
    mode = int(S[COMPLIANCE])
    for k in range(nc):
        r = mb + 3 * k
        mu = Cc[k, MU] if Cc[k, CONDIM] >= 3.0 else 0.0
        phi = Cc[k, DIST] - Cc[k, MARGIN]
        kc, cc = 0.0, 0.0
        if mode == SOLREF_MODE:
            kc, cc = solref_constants(dt, Cc[k, SOLREF], Cc[k, SOLREF + 1], Cc[k, SOLIMP + 1])
        elif mode == GIVEN:
            kc, cc = S[C_STIFFNESS], S[C_DAMPING]
        Rn, bn = unilateral_target(S, dt, phi, Gd[r, r], kc, cc)
        e = Cc[k, RESTITUTION]
        un = jv[r]
        if e > 0.0 and un < -S[BOUNCE] and phi + dt * un < 0.0:
            bn = min(bn, e * un)
        g[r] += bn
        R[r], R[r + 1], R[r + 2] = Rn, 0.0, 0.0
        kind[r], kind[r + 1], kind[r + 2] = NORMAL, TANGENT, TANGENT
        param[r], param[r + 1], param[r + 2] = mu, 0.0, 0.0
        lam[r], lam[r + 1], lam[r + 2] = warm_contact(Cc, k, wrec, dt)
    for r in range(mb + 3 * nc, m):
        i, sign = abs(int(jrow[r])) - 1, 1.0 if jrow[r] > 0.0 else -1.0
        if int(kind[r]) == UNILATERAL:
            Rl, bl_ = unilateral_target(S, dt, param[r], Gd[r, r], lim[i, STIFFNESS], lim[i, DAMPING])
            g[r] += bl_
            R[r], param[r] = Rl, 0.0
            lam[r] = sign * wjf[0, i] * dt
        else:
            R[r] = 0.0
            lam[r] = wjf[1, i] * dt
    # 6. solve; v' = v + L^-1 D^-1 (y + X^T lam); q' = q (+) dt v'
    it, res, rho = admm(Gd, R, g, kind, param, m, S[TOL], int(S[MAX_ITER]), 0.0, lam, Cf, Af, sw)
    for i in range(n):
        vn[0, i] = y[i]
    for r in range(m):
        lr = lam[r]
        for t in range(cnt[r]):
            vn[0, nz[r, t]] += J[r, nz[r, t]] * lr
    solve_lower_from_scaled(par, H, vn[0])
    for i in range(n):
        vn[0, i] += v[0, i] + h[0, i]
    joint_integrate_decoupled(kd, q, vn, dt, qn, 1)
    # records
    for c in range(mb):
        bl[c] = lam[c] / dt
    for i in range(n):
        jf[0, i], jf[1, i] = 0.0, 0.0
    for r in range(mb + 3 * nc, m):
        i, sign = abs(int(jrow[r])) - 1, 1.0 if jrow[r] > 0.0 else -1.0
        if int(kind[r]) == UNILATERAL:
            jf[0, i] += sign * lam[r] / dt
        else:
            jf[1, i] += lam[r] / dt
    for k in range(K):
        rec[k, BODY] = -1.0
    for k in range(nc):
        r = mb + 3 * k
        ln, l1, l2 = lam[r] / dt, lam[r + 1] / dt, lam[r + 2] / dt
        rec[k, BODY], rec[k, OTHER] = Cc[k, BODY_A], Cc[k, BODY_B]
        rec[k, GEOM], rec[k, OBSTACLE] = Cc[k, GEOM_A], Cc[k, GEOM_B]
        for a in range(3):
            rec[k, POINT_ + a] = Cc[k, POS + a]
            rec[k, NORMAL_ + a] = Cc[k, C_NORMAL + a]
            rec[k, FORCE + a] = ln * Cc[k, C_NORMAL + a] + l1 * Cc[k, TANGENT1 + a] + l2 * Cc[k, TANGENT2 + a]
        rec[k, PENETRATION] = -Cc[k, DIST]
        rec[k, LOCAL], rec[k, LOCAL + 1], rec[k, LOCAL + 2] = ln, l1, l2
        rec[k, PAIR_], rec[k, SLOT_] = Cc[k, PAIR], Cc[k, SLOT]
    info[ITERATIONS], info[RESIDUAL], info[RHO] = it, res, rho
    info[FOUND], info[ROWS], info[CONTACTS] = found, m, nc
    bad = 0.0
    for i in range(n):
        bad += vn[0, i] * 0.0
    if bad != 0.0:
        return Status.OVERFLOW
    return 0


# ---------------------------------------------------------------------------------- drivers
@njit(**HELPER)
def work_size(n, nq, K, G, mmax, ncd, cdw):
    """Floats of work one state takes (:func:`carve`): ``K`` contact rows, ``G`` geometries, ``mmax``
    problem rows, ``ncd`` bilateral constraints packed ``cdw`` wide."""
    return (12 * (n + 1) + 12 * max(G, 1) + MAX_PAIR * PC_WIDTH + 3 * SCRATCH + C_WIDTH * K + n * n + 5 * n + 1
            + mmax + (ncd + K) * max(cdw, CWIDTH) + 3 * mmax * n + 3 * mmax * mmax + (VEC_ROWS + WORK_ROWS) * mmax)


@njit(**HELPER)
def per_lane(n):
    """:func:`work_size` of a typical problem, for :mod:`screwdyn.dispatch` (the drivers' callers
    size the work themselves): 16 contacts, 64 geometries, a limit and a friction row per joint."""
    return work_size(n, n + 7, 16, 64, 48 + 2 * n, 0, CWIDTH)


@njit(**INLINE)
def carve(flat, n, K, G, mmax, ncd, cdw):
    """The work arrays of :func:`step_state` cut from ``flat`` (:func:`work_size` floats)."""
    o = 0
    Tw = window(flat, o, (n + 1, 12, 1))
    o += 12 * (n + 1)
    Gw = window(flat, o, (max(G, 1), 12, 1))
    o += 12 * max(G, 1)
    pc = window(flat, o, (MAX_PAIR, PC_WIDTH))
    o += MAX_PAIR * PC_WIDTH
    sc = window(flat, o, (SCRATCH, 3))
    o += 3 * SCRATCH
    Cc = window(flat, o, (K, C_WIDTH))
    o += C_WIDTH * K
    H3 = window(flat, o, (1, n, n))
    o += n * n
    h = window(flat, o, (1, n))
    zero = window(flat, o + n, (1, n))
    y = window(flat, o + 2 * n, (n,))
    par = window(flat, o + 3 * n, (n,)).view(np.int64)
    mark = window(flat, o + 4 * n, (n,)).view(np.int64)
    one = window(flat, o + 5 * n, (1,)).view(np.int64)
    o += 5 * n + 1
    cnt = window(flat, o, (mmax,)).view(np.int64)
    o += mmax
    w = max(cdw, CWIDTH)
    ccd = window(flat, o, (ncd + K, w))
    o += (ncd + K) * w
    J = window(flat, o, (mmax, n))
    Y = window(flat, o + mmax * n, (mmax, n))
    nz = window(flat, o + 2 * mmax * n, (mmax, n)).view(np.int64)
    o += 3 * mmax * n
    Gd = window(flat, o, (mmax, mmax))
    Cf = window(flat, o + mmax * mmax, (mmax, mmax))
    Af = window(flat, o + 2 * mmax * mmax, (mmax, mmax))
    o += 3 * mmax * mmax
    vec = window(flat, o, (VEC_ROWS, mmax))
    sw = window(flat, o + VEC_ROWS * mmax, (WORK_ROWS, mmax))
    for i in range(n):
        zero[0, i] = 0.0
    return Tw, Gw, pc, sc, Cc, H3, h, zero, one, par, ccd, J, Y, nz, cnt, mark, Gd, Cf, Af, vec, sw, y


@njit(**KERNEL)
def steps(narrow, kd, q, v, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, lim, S, wrec, wjf, wbl, qn, vn,
          rec, jf, bl, info, status, k0, k1):
    """States ``k0 <= k < k1``: one step each (:func:`step_state`) from ``q (B, nq)``, ``v, tau (B,
    n)``, ``fext (B, n, 6)`` with the warm starts ``wrec (B, K, REC_WIDTH)``, ``wjf (B, 2, n)``,
    ``wbl (B, mb)`` into ``qn``, ``vn``, ``rec``, ``jf``, ``bl``,
    ``info`` (shaped as the warm starts)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    K = rec.shape[1]
    mmax = max_rows(K, bl.shape[1], lim)
    flat = stack((work_size(n, nq, K, geoms.shape[0], mmax, cd.shape[0], cd.shape[1]),))
    work = carve(flat, n, K, geoms.shape[0], mmax, cd.shape[0], cd.shape[1])
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        check(status, k, Status.NONFINITE + 1, v[k])
        check(status, k, Status.NONFINITE + 2, tau[k])
        if status[k]:
            continue
        fk = window(fext, k * n * 6, (1, n, 6)) if use_fext else fext
        status[k] = step_state(kd, window(q, k * nq, (1, nq)), window(v, k * n, (1, n)), window(tau, k * n, (1, n)),
                               fk, use_fext, narrow, geoms, pairs, vertices, graph, cd, lim, S, wrec[k], wjf[k], wbl[k],
                               window(qn, k * nq, (1, nq)), window(vn, k * n, (1, n)), rec[k], jf[k],
                               bl[k], info[k], work)
