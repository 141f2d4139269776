"""screwdyn's dynamics as differentiable JAX functions (``jax.custom_vjp``), batched ``(..., n)``,
usable under ``jax.jit``, ``jax.grad`` and ``jax.vmap``: the dynamics run through
``jax.pure_callback`` on the CPU kernels (a GPU array is copied to the host by JAX), and the
backward passes apply the analytic derivatives (see :mod:`screwdyn._autodiff`)::

    import screwdyn.jax as sdj
    loss = lambda q: jnp.sum(sdj.inverse_dynamics(panda, q, qd, qdd) ** 2)
    jax.grad(loss)(q)

Results have the inputs' float type (float64 with ``jax.config.update("jax_enable_x64", True)``,
else float32, computed in float64). Not differentiated: the model, ``dt``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _autodiff
from .dynamics import forward_dynamics_derivatives, inverse_dynamics_derivatives
from .dynamics import forward_dynamics as _forward_dynamics
from .dynamics import inverse_dynamics as _inverse_dynamics

__all__ = ["inverse_dynamics", "forward_dynamics", "step"]


def _callback(f, shapes, dtype, *args):
    """``f(*numpy args)`` through ``jax.pure_callback``: results of ``shapes`` and ``dtype``."""
    def host(*xs):
        ys = f(*(np.asarray(x, dtype=np.float64) for x in xs))
        ys = ys if isinstance(ys, tuple) else (ys,)
        return tuple(np.asarray(y, dtype=dtype) for y in ys)
    out = tuple(jax.ShapeDtypeStruct(s, dtype) for s in shapes)
    return jax.pure_callback(host, out, *args, vmap_method="broadcast_all")


def _batch(*xs):
    return jnp.broadcast_shapes(*(x.shape[:-1] for x in xs))


def _dtype(*xs):
    return jnp.result_type(*xs)


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    return g.sum(axis=tuple(a for a, s in enumerate(shape) if s == 1 and g.shape[a] != 1), keepdims=True)


def _vjp(g, J):
    return jnp.einsum("...i,...ij->...j", g, J)


def _pair(model, value, derivatives, what, check_q):
    """A ``custom_vjp`` function ``(x0, x1, x2) -> value`` whose VJP applies ``derivatives``'s three
    matrices (the recursion is never traced)."""
    n = model.n

    @jax.custom_vjp
    def f(x0, x1, x2):
        return _callback(lambda a, b, c: value(model, a, b, c), (_batch(x0, x1, x2) + (n,),), _dtype(x0, x1, x2),
                         x0, x1, x2)[0]

    def fwd(x0, x1, x2):
        return f(x0, x1, x2), (x0, x1, x2)

    def bwd(res, g):
        if check_q:
            _autodiff.check_one_dof(model, what)
        x0, x1, x2 = res
        shape = _batch(x0, x1, x2) + (n, n)
        Js = _callback(lambda a, b, c: derivatives(model, a, b, c), (shape, shape, shape), g.dtype, x0, x1, x2)
        return tuple(_unbroadcast(_vjp(g, J), x.shape).astype(x.dtype) for J, x in zip(Js, res))

    f.defvjp(fwd, bwd)
    return f


def _functions(model):
    found = model._derived.get("jax")
    if found is None:
        found = model._derived["jax"] = {
            "id": _pair(model, _inverse_dynamics, inverse_dynamics_derivatives, "inverse_dynamics", not model._one_dof),
            "fd": _pair(model, _forward_dynamics, forward_dynamics_derivatives, "forward_dynamics", not model._one_dof)}
    return found


def inverse_dynamics(model, q, qd, qdd):
    """``tau = ID(q, qd, qdd)`` (:func:`screwdyn.inverse_dynamics`), its VJP from
    :func:`screwdyn.inverse_dynamics_derivatives`."""
    return _functions(model)["id"](jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))


def forward_dynamics(model, q, qd, tau):
    """``qdd = FD(q, qd, tau)`` by ABA (:func:`screwdyn.forward_dynamics`), its VJP from
    :func:`screwdyn.forward_dynamics_derivatives`."""
    return _functions(model)["fd"](jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))


def step(model, q, qd, tau, dt, scheme="rk4"):
    """One step of ``dt`` [s] of ``xdot = (qd, FD(q, qd, tau))`` (``scheme`` ``"rk4"`` or
    ``"semi_implicit_euler"``; as :func:`screwdyn.torch.step`): ``(q', qd')``, its VJP from the
    discrete pair ``(A, B)`` of :func:`screwdyn.linearize` ``(dt=, scheme=)``."""
    _autodiff.check_step(dt, scheme)
    _autodiff.check_one_dof(model, "step")
    key = ("jax_step", float(dt), scheme)
    f = model._derived.get(key)
    if f is None:
        f = model._derived[key] = _step_function(model, float(dt), scheme)
    return f(jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))


def _step_function(model, dt, scheme):
    n = model.n

    @jax.custom_vjp
    def f(q, qd, tau):
        shape = _batch(q, qd, tau) + (n,)
        return _callback(lambda a, b, c: _autodiff.step_numpy(model, a, b, c, dt, scheme), (shape, shape),
                         _dtype(q, qd, tau), q, qd, tau)

    def fwd(q, qd, tau):
        return f(q, qd, tau), (q, qd, tau)

    def bwd(res, g):
        q, qd, tau = res
        batch = _batch(q, qd, tau)
        A, B = _callback(lambda a, b, c: _autodiff.step_jacobians(model, a, b, c, dt, scheme),
                         (batch + (2 * n, 2 * n), batch + (2 * n, n)), g[0].dtype, q, qd, tau)
        gx = jnp.concatenate(jnp.broadcast_arrays(g[0], g[1]), axis=-1)
        ax, au = _vjp(gx, A), _vjp(gx, B)
        return tuple(_unbroadcast(v, x.shape).astype(x.dtype) for v, x in zip((ax[..., :n], ax[..., n:], au), res))

    f.defvjp(fwd, bwd)
    return f
