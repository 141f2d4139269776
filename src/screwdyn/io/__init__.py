"""Model input: the URDF loader and paths of the example-robot-data URDFs."""
from .urdf import EXAMPLE_ROBOTS, example_robot_data_path, load_urdf

__all__ = ["load_urdf", "example_robot_data_path", "EXAMPLE_ROBOTS"]
