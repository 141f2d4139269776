"""Benchmark screwdyn against Pinocchio side by side (see screwdyn.bench): python bench/bench.py --markdown"""
import sys

from screwdyn.bench import main

if __name__ == "__main__":
    sys.exit(main())
