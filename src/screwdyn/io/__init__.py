"""Model input: the URDF, MJCF and SDFormat loaders and paths of the example-robot-data URDFs."""
from .mjcf import load_mjcf
from .sdf import load_sdf
from .urdf import EXAMPLE_ROBOTS, example_robot_data_path, load_urdf

__all__ = ["load_urdf", "load_mjcf", "load_sdf", "example_robot_data_path", "EXAMPLE_ROBOTS"]
