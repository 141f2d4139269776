"""The rollouts benchmark against MuJoCo (src/screwdyn/bench_rollouts.py) on a small run: both
libraries timed, their states after a step equal."""
import pytest

pytest.importorskip("mujoco", reason="MuJoCo is not in the test extra (pip install mujoco)")


def test_rollouts_bench_times_both_libraries_and_they_agree():
    from screwdyn import bench_rollouts

    lines = []
    rows = bench_rollouts.run("panda", batches=(3, 20), steps=(5, 3), threads=(1,), rounds=1, out=lines.append)
    assert [(r[0], r[1], r[2]) for r in rows] == [(3, 5, 1), (20, 3, 1)]
    for B, T, k, ours, theirs, diff, c_ours, c_theirs in rows:
        assert ours > 0 and theirs > 0 and c_ours > 0 and c_theirs > 0
        assert diff < 1e-12
    assert len(lines) == 2 and all("ratio" in line for line in lines)
    assert bench_rollouts.markdown(rows).count("\n") == 3
