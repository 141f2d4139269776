"""screwdyn: rigid-body dynamics of robot trees in Lie-group form.

Spatial vectors are ordered angular first: twists ``(omega, v)``, wrenches ``(n, f)``.
``q`` is ordered as ``model.joint_names``. The equations of motion are
``tau = M(q) qdd + C(q, qd) qd + g(q)``.
"""
from . import inertia, spatial
from .errors import InputError, ModelError, ScrewdynError, URDFError
from .model import PRISMATIC, REVOLUTE, Model, ModelBuilder

__version__ = "0.1.0"
from .dynamics import external_wrenches, friction_torques, inverse_dynamics
from .io.urdf import load_urdf
