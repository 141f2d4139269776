"""examples/talos_push.py, shortened: Talos under whole-body inverse dynamics, pushed with 120 N
for 0.1 s at t = 0.5 s, does not fall: its soles stay put, both carry load throughout, and 1 s later
its base is back within a centimetre and its feet carry its weight."""
import importlib.util
import pathlib

import numpy as np

import screwdyn


def test_talos_push_recovers(tmp_path, capsys):
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "talos_push.py"
    spec = importlib.util.spec_from_file_location("talos_push", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    png = tmp_path / "talos_push.png"
    traj = example.main(["--duration", "1.5", "--push", "120", "0.5", "0.1", "--plot", str(png), "--animate", ""])

    talos = example.box_feet(screwdyn.models.load("talos_reduced"))
    weight = talos.mass.sum() * 9.81
    base, start = traj.q[:, :3], traj.q[0, :3]
    away = np.linalg.norm(base[:, :2] - start[:2], axis=1)
    assert 0.01 < away.max() < 0.05, away.max()                  # it gave way, by centimetres
    assert np.abs(base[:, 2] - start[2]).max() < 0.005           # never sank or crouched
    assert away[-1] < 0.012, away[-1]                            # and came back
    for sole in example.SOLES:
        T0 = screwdyn.frame_pose(talos, traj.q[0], sole)
        for q in traj.q[::50]:
            T = screwdyn.frame_pose(talos, q, sole)
            assert np.abs(T[:3, 3] - T0[:3, 3]).max() < 1e-3 and T[2, 2] > np.cos(np.radians(0.5))
    rec = traj.contacts
    feet = [talos.frame_body[talos.frame_names.index(s)] for s in example.SOLES]
    per_foot = np.stack([np.where((rec.body == b)[..., None], rec.force, 0.0).sum(axis=1)[:, 2] for b in feet], axis=1)
    assert per_foot.min() > 100.0                                # neither foot was lifted
    end = traj.t >= traj.t[-1] - 0.1
    assert abs(rec.total_force()[end, 2].mean() / weight - 1) < 0.02
    assert png.stat().st_size > 10_000
    assert "the base gave way by" in capsys.readouterr().out
