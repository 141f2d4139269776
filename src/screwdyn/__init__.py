"""screwdyn: rigid-body dynamics of robot trees in Lie-group form.

Spatial vectors are ordered angular first: twists ``(omega, v)``, wrenches ``(n, f)``.
``q`` is ordered as ``model.joint_names``. The equations of motion are
``tau = M(q) qdd + C(q, qd) qd + g(q)``.
"""
__version__ = "0.1.0"

from . import ident, inertia, models, spatial
from .dynamics import (
    bias_torques, body_poses, center_of_mass, coriolis_matrix, external_wrenches, forward_dynamics,
    forward_kinematics, frame_pose, frame_velocity, friction_torques, gravity_torques, inverse_dynamics, jacobian,
    jdot_qd, joint_torques_from_wrench, kinetic_energy, mass_matrix, mass_matrix_inverse, mechanical_energy,
    momentum, potential_energy,
)
from .ident import identify, regressor
from .errors import InputError, ModelError, ScrewdynError, URDFError
from .io.urdf import load_urdf
from .model import PRISMATIC, REVOLUTE, Model, ModelBuilder
from .sim import SimulationError, Trajectory, simulate
from .trajectory import JointTrajectory
