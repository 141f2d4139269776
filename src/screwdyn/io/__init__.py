"""Model input: the URDF and MJCF loaders and paths of the example-robot-data URDFs."""
from .mjcf import load_mjcf
from .urdf import EXAMPLE_ROBOTS, example_robot_data_path, load_urdf

__all__ = ["load_urdf", "load_mjcf", "example_robot_data_path", "EXAMPLE_ROBOTS"]
