"""screwdyn: rigid-body dynamics of robot trees in Lie-group form.

Spatial vectors are ordered angular first: twists ``(omega, v)``, wrenches ``(n, f)``.
``q`` is ordered as ``model.joint_names``. The equations of motion are
``tau = M(q) qdd + C(q, qd) qd + g(q)``.
"""
__version__ = "0.1.0"

from . import inertia, spatial
from .configuration import (
    difference, from_mujoco, from_pinocchio, integrate, neutral, normalize, random_configuration, to_mujoco,
    to_pinocchio,
)
from .dynamics import (
    bias_torques, body_poses, centroidal_momentum, centroidal_momentum_matrix, center_of_mass, coriolis_matrix, external_wrenches, forward_dynamics,
    forward_dynamics_derivatives, forward_kinematics, frame_pose, frame_velocity, friction_torques, gravity_torques,
    inverse_dynamics, inverse_dynamics_derivatives, jacobian, jdot_qd, joint_torques_from_wrench, kinetic_energy,
    linearize, mass_matrix, mass_matrix_inverse, mechanical_energy, momentum, potential_energy,
)
from .constrained import (
    constrained_forward_dynamics, constrained_inverse_dynamics, constraint_drift, constraint_error, constraint_jacobian,
    delassus, impulse_dynamics,
)
from .constrained_derivatives import constrained_forward_dynamics_derivatives, impulse_dynamics_derivatives
from .constraints import FrameContact, FrameLoop, JointCoupling, PointContact, PointLoop
from .errors import InputError, ModelError, ScrewdynError, URDFError
from .model import FREE_FLYER, PRISMATIC, REVOLUTE, SPHERICAL, Model, ModelBuilder

# Loaded on first use: identification pulls in scipy.signal/optimize/stats (over a second), the
# symbolic layer SymPy, the URDF reader defusedxml, the MJCF reader MuJoCo, the viewer viser;
# ``import screwdyn`` stays fast (its start-up, ``bench/startup.py``, is mostly numba's).
_LAZY = {"ident": ("ident", None), "identify": ("ident", "identify"), "regressor": ("ident", "regressor"),
         "symbolic": ("symbolic", None), "models": ("models", None), "load_urdf": ("io.urdf", "load_urdf"),
         "load_mjcf": ("io.mjcf", "load_mjcf"), "load_sdf": ("io.sdf", "load_sdf"),
         "simulate": ("sim", "simulate"), "Trajectory": ("sim", "Trajectory"),
         "SimulationError": ("sim", "SimulationError"), "JointTrajectory": ("trajectory", "JointTrajectory"),
         "step": ("sim.contacts", "step"), "ContactSettings": ("sim.contacts", "ContactSettings"),
         "viz": ("viz", None), "view": ("viz.viewer", "view"), "render": ("viz.renderer", "render"),
         "detect": ("collision", "detect"), "collider": ("collision", "collider"),
         "Contacts": ("collision", "Contacts"), "Collision": ("geometry", "Collision"),
         "Environment": ("environment", "Environment"), "Ground": ("environment", "Ground"),
         "Box": ("environment", "Box"), "Sphere": ("environment", "Sphere"), "Capsule": ("environment", "Capsule"),
         "Cylinder": ("environment", "Cylinder")}

__all__ = [   # what ``from screwdyn import *`` gives: the eager names and the light lazy ones
    "inertia", "spatial", "models",
    "bias_torques", "body_poses", "centroidal_momentum", "centroidal_momentum_matrix", "center_of_mass", "coriolis_matrix", "external_wrenches", "forward_dynamics",
    "forward_kinematics", "frame_pose", "frame_velocity", "friction_torques", "gravity_torques", "inverse_dynamics",
    "jacobian", "jdot_qd", "joint_torques_from_wrench", "kinetic_energy", "mass_matrix", "mass_matrix_inverse",
    "mechanical_energy", "momentum", "potential_energy",
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize",
    "InputError", "ModelError", "ScrewdynError", "URDFError", "PRISMATIC", "REVOLUTE", "FREE_FLYER", "SPHERICAL",
    "Model", "ModelBuilder",
    "PointContact", "FrameContact", "PointLoop", "FrameLoop", "JointCoupling",
    "constraint_jacobian", "constraint_drift", "constraint_error", "delassus", "constrained_forward_dynamics",
    "impulse_dynamics", "constrained_inverse_dynamics", "constrained_forward_dynamics_derivatives",
    "impulse_dynamics_derivatives",
    "difference", "from_mujoco", "from_pinocchio", "integrate", "neutral", "normalize", "random_configuration",
    "to_mujoco", "to_pinocchio",
    "load_urdf", "load_mjcf", "load_sdf", "simulate", "Trajectory", "SimulationError", "JointTrajectory", "render", "view",
    "detect", "collider", "Contacts", "Collision", "Environment", "Ground", "Box", "Sphere", "Capsule", "Cylinder",
    "step", "ContactSettings",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        mod = importlib.import_module(f"{__name__}.{module}")
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value   # found directly from now on
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
