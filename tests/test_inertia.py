"""Inertia of shapes, rotation, Steiner, compound bodies and spatial inertia (docs/theory.md §3)."""
import numpy as np
import pytest

from screwdyn.errors import ModelError
from screwdyn.inertia import (
    InertiaWarning, RigidBody, box, check_inertia, compound, cylinder, ellipsoid, hollow_cylinder, point_mass, rod,
    rotate_inertia, spatial_inertia, sphere, steiner,
)
from screwdyn.spatial import Ad, exp_so3, inverse_transform, transform


def sample_inertia(shape_points, mass):
    """Monte-Carlo-free check: inertia of a point cloud about its centroid."""
    pts = shape_points - shape_points.mean(axis=0)
    dm = mass / len(pts)
    return sum(dm * (p @ p * np.eye(3) - np.outer(p, p)) for p in pts)


def test_box_formula_against_a_dense_grid():
    m, a, b, c = 2.0, 0.4, 0.2, 0.1
    g = [(np.arange(k) + 0.5) / k - 0.5 for k in (40, 20, 10)]
    X, Y, Z = np.meshgrid(g[0] * a, g[1] * b, g[2] * c, indexing="ij")
    I = sample_inertia(np.stack([X.ravel(), Y.ravel(), Z.ravel()], 1), m)
    # a k-point midpoint grid over a side L has variance (1 - 1/k^2) L^2 / 12: compare exactly
    shrink = [np.sqrt(1 - 1 / k**2) for k in (40, 20, 10)]
    assert np.allclose(box(m, a * shrink[0], b * shrink[1], c * shrink[2]).inertia, I, rtol=1e-12, atol=1e-15)
    assert np.allclose(np.diag(box(m, a, b, c).inertia), [m * (b**2 + c**2) / 12, m * (a**2 + c**2) / 12, m * (a**2 + b**2) / 12])


def test_shape_formulas_of_the_notes():
    m, r, h = 3.0, 0.2, 0.9
    assert np.allclose(np.diag(cylinder(m, r, h).inertia), [m * (3 * r**2 + h**2) / 12] * 2 + [m * r**2 / 2])
    assert np.allclose(np.diag(ellipsoid(m, 1.0, 2.0, 3.0).inertia), [m * 13 / 5, m * 10 / 5, m * 5 / 5])
    assert np.allclose(np.diag(sphere(m, r).inertia), [0.4 * m * r**2] * 3)
    assert np.allclose(np.diag(rod(m, h).inertia), [m * h**2 / 12] * 2 + [0])
    a, b = 0.3, 0.2   # hollow cylinder (tube): I_axis = m (a^2 + b^2) / 2, I_perp = m (3 (a^2 + b^2) + h^2) / 12
    I = np.diag(hollow_cylinder(m, a, b, h).inertia)
    assert np.allclose(I, [m * (3 * (a**2 + b**2) + h**2) / 12] * 2 + [m * (a**2 + b**2) / 2])
    assert np.allclose(hollow_cylinder(m, r, 0.0, h).inertia, cylinder(m, r, h).inertia)
    with pytest.raises(ModelError, match="inner_radius"):
        hollow_cylinder(m, 0.1, 0.2, h)


def test_steiner_of_note_004_is_the_parallel_axis_theorem():
    m, h = 2.0, 0.6
    c = cylinder(m, 0.1, h)
    I_end = steiner(c.inertia, m, [0, 0, h / 2])
    assert np.isclose(I_end[0, 0], c.inertia[0, 0] + m * (h / 2) ** 2)
    r = np.array([0.1, -0.3, 0.2])
    assert np.allclose(steiner(c.inertia, m, r), c.inertia + m * (r @ r * np.eye(3) - np.outer(r, r)))


def test_rotation_keeps_kinetic_energy(rng):
    I = box(1.5, 0.3, 0.2, 0.1).inertia
    R = exp_so3(rng.normal(size=3))
    w_b = rng.normal(size=3)
    I_a = rotate_inertia(I, R)          # docs/theory.md eq. (3.4): energy independent of the frame
    assert np.isclose(w_b @ I @ w_b, (R @ w_b) @ I_a @ (R @ w_b))


def test_compound_of_point_masses_matches_direct_sum():
    pts = [point_mass(1.0, [1, 0, 0]), point_mass(2.0, [0, 1, 0]), point_mass(3.0, [0, 0, 1])]
    c = compound(pts)
    assert c.mass == 6.0
    assert np.allclose(c.com, [1 / 6, 2 / 6, 3 / 6])
    direct = sum(p.mass * ((p.com - c.com) @ (p.com - c.com) * np.eye(3) - np.outer(p.com - c.com, p.com - c.com)) for p in pts)
    assert np.allclose(c.inertia, direct)
    assert np.allclose((pts[0] + pts[1] + pts[2]).inertia, c.inertia)


def test_compound_note_001_cylinder_and_prism():
    # a 2 kg cylinder at {a} and a 1 kg prism along x, compounded by docs/theory.md eq. (3.11);
    # the CoM moves towards the prism
    cyl = cylinder(2.0, 0.1, 0.2)
    prism = box(1.0, 0.3, 0.05, 0.05, com=[0.25, 0, 0])
    c = cyl + prism
    assert np.allclose(c.com, [0.25 / 3, 0, 0])
    assert np.isclose(c.inertia[0, 0], cyl.inertia[0, 0] + prism.inertia[0, 0])
    assert np.isclose(c.inertia[2, 2], cyl.inertia[2, 2] + 2 * (0.25 / 3) ** 2 + prism.inertia[2, 2] + (0.25 - 0.25 / 3) ** 2)


def test_spatial_inertia_generalizes_steiner(rng):
    body = RigidBody(2.0, [0.1, -0.2, 0.3], box(2.0, 0.3, 0.2, 0.1).inertia)
    G = body.spatial_inertia()
    # G_b = Ad_{T_cb}^T G_c Ad_{T_cb} with {c} at the CoM, parallel to {b}
    G_c = np.diag(np.concatenate([np.diag(body.inertia), [2.0] * 3]))
    T_b_c = transform(None, body.com)
    A = Ad(inverse_transform(T_b_c))
    assert np.allclose(G, A.T @ G_c @ A)
    assert np.allclose(G, G.T)
    assert np.all(np.linalg.eigvalsh(G) > 0)
    V = rng.normal(size=6)   # kinetic energy: 1/2 V^T G V = 1/2 m |v_c|^2 + 1/2 w^T I_c w
    v_c = V[3:] + np.cross(V[:3], body.com)
    assert np.isclose(V @ G @ V, 2.0 * v_c @ v_c + V[:3] @ body.inertia @ V[:3])
    back = RigidBody.from_spatial(G)
    assert np.isclose(back.mass, 2.0) and np.allclose(back.com, body.com) and np.allclose(back.inertia, body.inertia)
    assert np.allclose(spatial_inertia(body.mass, body.com, body.inertia), G)


def test_transformed_body_and_spatial_inertia_agree(rng):
    body = RigidBody(1.2, [0.1, 0.0, 0.2], box(1.2, 0.2, 0.3, 0.4).inertia)
    T_b_f = transform(exp_so3(rng.normal(size=3)), rng.normal(size=3))
    G_f = body.spatial_inertia(T_b_f)
    assert np.allclose(G_f, body.transformed(inverse_transform(T_b_f)).spatial_inertia())


def test_principal_axes():
    R = exp_so3([0.3, -0.5, 0.8])
    body = RigidBody(1.0, [0, 0, 0], rotate_inertia(np.diag([1.0, 2.0, 2.5]), R))
    moments, axes = body.principal_axes()
    assert np.allclose(moments, [1.0, 2.0, 2.5])
    assert np.isclose(np.linalg.det(axes), 1.0)
    assert np.allclose(axes.T @ body.inertia @ axes, np.diag(moments), atol=1e-12)


@pytest.mark.parametrize("mass, I, match", [
    (-1.0, np.eye(3), "negative mass"),
    (np.nan, np.eye(3), "mass"),
    (1.0, np.diag([1.0, -1.0, 1.0]), "positive semi-definite"),
    (1.0, np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
    (1.0, np.diag([1.0, np.nan, 1.0]), "NaN"),
])
def test_non_physical_inertia_is_refused(mass, I, match):
    with pytest.raises(ModelError, match=match):
        check_inertia(mass, I, "link 'x'")


def test_triangle_inequality_warns_or_raises():
    I = np.diag([0.1, 0.1, 1.0])
    with pytest.warns(InertiaWarning, match="triangle"):
        check_inertia(1.0, I, "link 'cad'")
    with pytest.raises(ModelError, match="link 'cad'.*triangle"):
        check_inertia(1.0, I, "link 'cad'", strict=True)
    check_inertia(1.0, np.diag([1.0, 1.0, 2.0]), "thin disc")   # equality is physical (a lamina)
