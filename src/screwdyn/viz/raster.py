"""A z-buffer triangle rasteriser: which triangle is nearest at the centre of each pixel.

For each triangle ``(a, b, c)`` with screen positions ``(x, y)`` and a value ``w`` that is linear in
screen space and larger for nearer points (``w = 1/z`` of a perspective camera, whose depth ``z``
is not linear on the screen but ``1/z`` is), every pixel ``(i, j)`` whose centre
``p = (j + 1/2, i + 1/2)`` lies inside the triangle gets the barycentric weights from the edge
functions

    e_a(p) = (x_c - x_b)(p_y - y_b) - (y_c - y_b)(p_x - x_b)     (and cyclically e_b, e_c),
    lambda_k = e_k / (e_a + e_b + e_c),   w(p) = sum_k lambda_k w_k,

and keeps the triangle if ``w(p)`` beats the buffer (``w > zbuf[i, j]``). Both windings are drawn
(meshes from files do not agree on one). A triangle with a vertex at ``w <= 0`` (behind the camera)
is skipped.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["rasterize"]


@njit(cache=True, nogil=True)
def _rasterize(x, y, w, faces, zbuf, ids):
    H, W = zbuf.shape
    for f in range(faces.shape[0]):
        a, b, c = faces[f, 0], faces[f, 1], faces[f, 2]
        wa, wb, wc = w[a], w[b], w[c]
        if wa <= 0.0 or wb <= 0.0 or wc <= 0.0:
            continue
        xa, ya, xb, yb, xc, yc = x[a], y[a], x[b], y[b], x[c], y[c]
        area = (xb - xa) * (yc - ya) - (xc - xa) * (yb - ya)
        if area == 0.0 or not math.isfinite(area):
            continue
        j0 = max(math.floor(min(xa, xb, xc) - 0.5), 0)
        j1 = min(math.ceil(max(xa, xb, xc) - 0.5), W - 1)
        i0 = max(math.floor(min(ya, yb, yc) - 0.5), 0)
        i1 = min(math.ceil(max(ya, yb, yc) - 0.5), H - 1)
        inv = 1.0 / area
        for i in range(i0, i1 + 1):
            py = i + 0.5
            for j in range(j0, j1 + 1):
                px = j + 0.5
                la = ((xc - xb) * (py - yb) - (yc - yb) * (px - xb)) * inv
                lb = ((xa - xc) * (py - yc) - (ya - yc) * (px - xc)) * inv
                lc = 1.0 - la - lb
                if la < 0.0 or lb < 0.0 or lc < 0.0:
                    continue
                z = la * wa + lb * wb + lc * wc
                if z > zbuf[i, j]:
                    zbuf[i, j] = z
                    ids[i, j] = f
    return 0


def rasterize(x, y, w, faces, zbuf, ids):
    """Draw triangles ``faces (F, 3)`` of vertices at screen ``x, y (V,)`` with values ``w (V,)``
    into ``zbuf (H, W)`` (kept: the largest ``w``) and ``ids (H, W)`` (the triangle's index), in
    place; see the module docstring."""
    _rasterize(np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64),
               np.ascontiguousarray(w, dtype=np.float64), np.ascontiguousarray(faces, dtype=np.int64), zbuf, ids)


@njit(cache=True, nogil=True)
def floor(img, zbuf, R, pos, f, floor_z, tile, light, dark, background, shadow, x0, cell, centre, radius):
    """Paint the floor plane ``z = floor_z`` into ``img (H, W, 3)`` where it is nearer than the robot
    (``zbuf``: 1/depth, 0 where no robot): checkers of ``tile`` metres, darkened by ``shadow`` (a grid
    of cells ``cell`` wide from corner ``x0`` over the floor), fading into ``background`` from
    ``0.55 radius`` to ``radius`` around ``centre``. The camera: axes ``R``, at ``pos``, focal ``f`` px."""
    H, W = zbuf.shape
    n0, n1 = shadow.shape
    for i in range(H):
        ry = (i + 0.5 - 0.5 * H) / f
        for j in range(W):
            rx = (j + 0.5 - 0.5 * W) / f
            dz = R[2, 0] * rx + R[2, 1] * ry + R[2, 2]     # the ray at unit depth: its hit's t is its depth
            if dz >= 0.0:
                continue
            t = (floor_z - pos[2]) / dz
            if t <= 0.0 or (zbuf[i, j] > 0.0 and t * zbuf[i, j] >= 1.0):
                continue
            px = pos[0] + t * (R[0, 0] * rx + R[0, 1] * ry + R[0, 2])
            py = pos[1] + t * (R[1, 0] * rx + R[1, 1] * ry + R[1, 2])
            r = math.hypot(px - centre[0], py - centre[1]) / radius
            a = min(max((1.0 - r) / 0.45, 0.0), 1.0)
            if a <= 0.0:
                continue
            a = a * a * (3.0 - 2.0 * a)
            odd = (math.floor(px / tile) + math.floor(py / tile)) & 1
            gi = min(max(int((py - x0[1]) / cell), 0), n0 - 1)
            gj = min(max(int((px - x0[0]) / cell), 0), n1 - 1)
            s = 1.0 - 0.32 * shadow[gi, gj]
            for k in range(3):
                c = (dark[k] if odd else light[k]) * s
                img[i, j, k] = a * c + (1.0 - a) * background[k]
    return 0


@njit(cache=True, nogil=True)
def compose(img, ids, face_rgb, face_part, outline, ss, out):
    """The robot's pixels of ``img (H, W, 3)``: the colour ``face_rgb`` of the triangle ``ids`` shows
    there, drawn darker (an outline) where a neighbour shows another part (``face_part``) or no
    part; then ``img`` averaged over ``ss x ss`` blocks into ``out (H / ss, W / ss, 3)`` uint8."""
    H, W = ids.shape
    for i in range(H):
        for j in range(W):
            f = ids[i, j]
            if f < 0:
                continue
            edge = False
            if outline:
                p = face_part[f]
                for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    ii, jj = i + di, j + dj
                    if 0 <= ii < H and 0 <= jj < W:
                        g = ids[ii, jj]
                        if g < 0 or face_part[g] != p:
                            edge = True
            for k in range(3):
                c = face_rgb[f, k]
                img[i, j, k] = 0.35 * c + 0.65 * 0.18 if edge else c
    scale = 1.0 / (ss * ss)
    for i in range(H // ss):
        for j in range(W // ss):
            for k in range(3):
                acc = 0.0
                for a in range(ss):
                    for b in range(ss):
                        acc += img[i * ss + a, j * ss + b, k]
                out[i, j, k] = min(max(int(acc * scale * 255.0 + 0.5), 0), 255)
    return 0
