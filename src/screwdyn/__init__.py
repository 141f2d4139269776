"""screwdyn: rigid-body dynamics of robot trees in Lie-group form.

Spatial vectors are ordered angular first: twists ``(omega, v)``, wrenches ``(n, f)``.
``q`` is ordered as ``model.joint_names``. The equations of motion are
``tau = M(q) qdd + C(q, qd) qd + g(q)``.
"""
__version__ = "0.1.0"

from . import inertia, models, spatial
from .dynamics import (
    bias_torques, body_poses, center_of_mass, coriolis_matrix, external_wrenches, forward_dynamics,
    forward_kinematics, frame_pose, frame_velocity, friction_torques, gravity_torques, inverse_dynamics, jacobian,
    jdot_qd, joint_torques_from_wrench, kinetic_energy, mass_matrix, mass_matrix_inverse, mechanical_energy,
    momentum, potential_energy,
)
from .errors import InputError, ModelError, ScrewdynError, URDFError
from .io.urdf import load_urdf
from .model import PRISMATIC, REVOLUTE, Model, ModelBuilder
from .sim import SimulationError, Trajectory, simulate
from .trajectory import JointTrajectory

# Loaded on first use: identification pulls in scipy.signal/optimize/stats (over a second), the
# symbolic layer SymPy; ``import screwdyn`` stays fast.
_LAZY = {"ident": ("ident", None), "identify": ("ident", "identify"), "regressor": ("ident", "regressor"),
         "symbolic": ("symbolic", None)}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        mod = importlib.import_module(f"{__name__}.{module}")
        return mod if attr is None else getattr(mod, attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
