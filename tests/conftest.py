import os

# One BLAS thread: the suite runs on 2 cores next to numba's own threads; oversubscribed BLAS
# made least-squares tests several times slower. Set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Property tests run hypothesis' default 100 examples in CI ("ci", the default profile; no deadline: a
# shared machine's pauses are no failures); HYPOTHESIS_PROFILE=deep runs 2000 (a search for defects
# before a release). A test's own @settings override these.
settings.register_profile("ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test (deselect with -m 'not slow')")


@pytest.fixture
def rng():
    return np.random.default_rng(int(os.environ.get("SCREWDYN_TEST_SEED", "20261122")))
