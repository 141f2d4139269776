"""screwdyn's dynamics as differentiable PyTorch functions (``torch.autograd.Function``s), on CPU
or CUDA tensors, batched ``(..., n)``, their gradients from the analytic derivative kernels (see
:mod:`screwdyn._autodiff`)::

    import screwdyn.torch as sdt
    tau = sdt.inverse_dynamics(panda, q, qd, qdd)            # q.requires_grad: tau.backward() works
    q1, qd1 = sdt.step(panda, q, qd, tau, dt=1e-3)          # one RK4 step, differentiable

Forward passes run where the tensors are (CUDA tensors: :mod:`screwdyn.gpu`, for a batch of at
least ``screwdyn.gpu.MIN_BATCH`` states); backward passes compute the derivatives with the CPU
kernels (CUDA tensors are copied to the host and the gradients back). Tensors of float64 give
float64 results; float32 tensors give float32 (computed in float64 on the CPU). Not differentiated:
the model, ``dt``, and external wrenches (no argument here).
"""
from __future__ import annotations

import torch

from . import _autodiff
from .dynamics import forward_dynamics_derivatives, inverse_dynamics_derivatives
from .dynamics import forward_dynamics as _forward_dynamics
from .dynamics import inverse_dynamics as _inverse_dynamics

__all__ = ["inverse_dynamics", "forward_dynamics", "step"]


def _unbroadcast(g, like):
    """``g`` summed over the axes along which ``like`` was broadcast, shaped as ``like``."""
    if g is None:
        return None
    while g.dim() > like.dim():
        g = g.sum(0)
    for ax, size in enumerate(like.shape):
        if size == 1 and g.shape[ax] != 1:
            g = g.sum(ax, keepdim=True)
    return g.to(like.dtype)


def _vjp(g, J):
    """``g^T J`` over the last two axes: ``[..., j] = sum_i g[..., i] J[..., i, j]``."""
    return torch.einsum("...i,...ij->...j", g, J.to(device=g.device, dtype=g.dtype))


def _as_tensor(x, like):
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=like.dtype, device=like.device)


class _InverseDynamics(torch.autograd.Function):
    @staticmethod
    def forward(ctx, model, q, qd, qdd):
        ctx.model = model
        ctx.save_for_backward(q, qd, qdd)
        return _inverse_dynamics(model, q.detach(), qd.detach(), qdd.detach())

    @staticmethod
    def backward(ctx, g):
        q, qd, qdd = ctx.saved_tensors
        model = ctx.model
        want = ctx.needs_input_grad[1:]
        if want[0]:
            _autodiff.check_one_dof(model, "inverse_dynamics")
        dq, dqd, dqdd = inverse_dynamics_derivatives(model, q.detach(), qd.detach(), qdd.detach())
        return (None,) + tuple(_unbroadcast(_vjp(g, J), x) if w else None
                               for J, x, w in zip((dq, dqd, dqdd), (q, qd, qdd), want))


class _ForwardDynamics(torch.autograd.Function):
    @staticmethod
    def forward(ctx, model, q, qd, tau):
        ctx.model = model
        ctx.save_for_backward(q, qd, tau)
        return _forward_dynamics(model, q.detach(), qd.detach(), tau.detach())

    @staticmethod
    def backward(ctx, g):
        q, qd, tau = ctx.saved_tensors
        model = ctx.model
        want = ctx.needs_input_grad[1:]
        if want[0]:
            _autodiff.check_one_dof(model, "forward_dynamics")
        dq, dqd, minv = forward_dynamics_derivatives(model, q.detach(), qd.detach(), tau.detach())
        return (None,) + tuple(_unbroadcast(_vjp(g, J), x) if w else None
                               for J, x, w in zip((dq, dqd, minv), (q, qd, tau), want))


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx, model, q, qd, tau, dt, scheme):
        ctx.model, ctx.dt, ctx.scheme = model, dt, scheme
        ctx.save_for_backward(q, qd, tau)
        q, qd, tau = torch.broadcast_tensors(q.detach(), qd.detach(), tau.detach())
        if q.is_cuda and q.dim() == 2 and q.shape[0] >= _gpu_min_batch():
            from .gpu import rollout
            return rollout(model, q.contiguous(), qd.contiguous(), tau.contiguous(), dt, 1, scheme)
        q1, qd1 = _autodiff.step_numpy(model, q.cpu().numpy(), qd.cpu().numpy(), tau.cpu().numpy(), dt, scheme)
        return (torch.from_numpy(q1).to(device=q.device, dtype=q.dtype),
                torch.from_numpy(qd1).to(device=q.device, dtype=q.dtype))

    @staticmethod
    def backward(ctx, gq, gqd):
        q, qd, tau = ctx.saved_tensors
        model, n = ctx.model, ctx.model.n
        A, B = _autodiff.step_jacobians(model, q.detach(), qd.detach(), tau.detach(), ctx.dt, ctx.scheme)
        A, B = torch.from_numpy(A), torch.from_numpy(B)
        g = torch.cat(torch.broadcast_tensors(gq, gqd), dim=-1)
        gx = _vjp(g, A)
        gu = _vjp(g, B)
        want = ctx.needs_input_grad[1:4]
        grads = (gx[..., :n], gx[..., n:], gu)
        return (None,) + tuple(_unbroadcast(gr, x) if w else None for gr, x, w in zip(grads, (q, qd, tau), want)) \
            + (None, None)


def _gpu_min_batch():
    from . import gpu
    return gpu.MIN_BATCH


def inverse_dynamics(model, q, qd, qdd):
    """``tau = ID(q, qd, qdd)`` (:func:`screwdyn.inverse_dynamics`), differentiable in ``q``, ``qd``,
    ``qdd`` (tensors ``(n,)`` or ``(..., n)``, broadcasting): the backward pass applies
    :func:`screwdyn.inverse_dynamics_derivatives` (``dtau_dqdd = M``)."""
    q = _as_tensor(q, qd if isinstance(qd, torch.Tensor) else torch.zeros((), dtype=torch.float64))
    return _InverseDynamics.apply(model, q, _as_tensor(qd, q), _as_tensor(qdd, q))


def forward_dynamics(model, q, qd, tau):
    """``qdd = FD(q, qd, tau)`` by ABA (:func:`screwdyn.forward_dynamics`), differentiable in ``q``,
    ``qd``, ``tau``: the backward pass applies :func:`screwdyn.forward_dynamics_derivatives`."""
    q = _as_tensor(q, qd if isinstance(qd, torch.Tensor) else torch.zeros((), dtype=torch.float64))
    return _ForwardDynamics.apply(model, q, _as_tensor(qd, q), _as_tensor(tau, q))


def step(model, q, qd, tau, dt, scheme="rk4"):
    """One step of ``dt`` [s] of ``xdot = (qd, FD(q, qd, tau))``, ``tau`` held: ``scheme`` ``"rk4"``
    or ``"semi_implicit_euler"`` (:func:`screwdyn.simulate`'s step without friction, joint limits and
    saturation; on CUDA tensors :func:`screwdyn.gpu.rollout`). Returns ``(q', qd')``, differentiable
    in ``q``, ``qd``, ``tau`` through the discrete pair of :func:`screwdyn.linearize` ``(dt=,
    scheme=)``, exact derivatives of the step. Models whose joints have one degree of freedom each."""
    _autodiff.check_step(dt, scheme)
    _autodiff.check_one_dof(model, "step")
    q = _as_tensor(q, qd if isinstance(qd, torch.Tensor) else torch.zeros((), dtype=torch.float64))
    return _Step.apply(model, q, _as_tensor(qd, q), _as_tensor(tau, q), float(dt), scheme)
