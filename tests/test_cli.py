"""The command line: subprocess runs (exit codes, files written) on bundled robots and on a URDF
path, and in-process runs of every subcommand checked against the library."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.cli import main, parse_vector
from screwdyn.sim import Trajectory

PNG = b"\x89PNG\r\n\x1a\n"

URDF = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 -0.2"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0 0 -0.15"/><mass value="0.7"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.0005"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/>
    <dynamics damping="0.05"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 -0.4"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/></joint>
</robot>
"""


def run_cli(*args, cwd=None, timeout=120):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "screwdyn", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


@pytest.fixture
def urdf_path(tmp_path):
    p = tmp_path / "two_link.urdf"
    p.write_text(URDF)
    return p


# ---------------------------------------------------------------------------- subprocess
def test_simulate_default_writes_plot_csv_and_animation(tmp_path):
    """The README's first command: 'screwdyn simulate --plot ...' with no model: panda."""
    r = run_cli("simulate", "--duration", "0.2", "--plot", "sim.png", "--csv", "sim.csv", "--animate", "sim.gif",
                "--fps", "10", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "panda: 7 joints" in r.stdout and "wrote sim.png" in r.stdout
    assert "computed torque along a quintic" in r.stdout and "joint limits on" in r.stdout
    assert (tmp_path / "sim.png").read_bytes()[:8] == PNG
    assert (tmp_path / "sim.gif").read_bytes()[:6] == b"GIF89a"
    data = np.genfromtxt(tmp_path / "sim.csv", delimiter=",", names=True)
    assert len(data) == 201 and "q_panda_joint7" in data.dtype.names
    np.testing.assert_allclose(data["q_panda_joint1"][0], models.home("panda")[0])


def test_cli_on_a_urdf_path(urdf_path, tmp_path):
    r = run_cli("info", str(urdf_path))
    assert r.returncode == 0, r.stderr
    assert "two_link: 2 degrees of freedom" in r.stdout and "shoulder" in r.stdout
    r = run_cli("simulate", str(urdf_path), "--duration", "0.5", "--integrator", "DOP853", "--npz", "out.npz",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tr = Trajectory.from_npz(tmp_path / "out.npz")
    assert tr.model_name == "two_link" and tr.q.shape == (501, 2)


def test_errors_are_one_line_and_exit_2(tmp_path):
    r = run_cli("info", "no_such_robot")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("screwdyn: error: unknown model")
    assert "Traceback" not in r.stderr
    r = run_cli("--debug", "info", "missing.urdf")
    assert r.returncode != 0 and "Traceback" in r.stderr
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                   "<child link='b'/></joint></robot>")
    r = run_cli("mass-matrix", str(bad))
    assert r.returncode == 2 and r.stderr.startswith("screwdyn: error:") and "Traceback" not in r.stderr


def test_console_script_help():
    exe = os.path.join(os.path.dirname(sys.executable), "screwdyn")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "screwdyn"]
    r = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "simulate" in r.stdout and "inverse-dynamics" in r.stdout


# ---------------------------------------------------------------------------- in process
@pytest.mark.parametrize("command", ["info", "inverse-dynamics", "forward-dynamics", "mass-matrix", "linearize",
                                     "simulate", "derive", "compile"])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    assert "usage: screwdyn " + command in capsys.readouterr().out


def test_inverse_dynamics_matches_the_library(capsys):
    assert main(["inverse-dynamics", "puma560", "--q", "0", "pi/4", "pi", "0", "pi/4", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(out["tau"], [0, 31.6399, 6.0351, 0, 0.0283, 0], atol=5e-5)
    q, qd, qdd = [0.1, -0.2], [0.3, 0.4], [-1.0, 2.0]
    assert main(["inverse-dynamics", "planar_2r", "--q", "0.1,-0.2", "--qd", "0.3", "0.4", "--qdd", "-1", "2",
                 "--json"]) == 0
    tau = json.loads(capsys.readouterr().out)["tau"]
    np.testing.assert_allclose(tau, screwdyn.inverse_dynamics(models.load("planar_2r"), q, qd, qdd), rtol=1e-14)
    assert main(["inverse-dynamics", "planar_2r", "--q", "0.1", "-0.2"]) == 0
    assert "joint1" in capsys.readouterr().out


def test_forward_dynamics_and_mass_matrix(capsys):
    arm = models.load("panda")
    q = models.home("panda")
    args = ["--q", *[repr(float(x)) for x in q]]
    assert main(["forward-dynamics", "panda", *args, "--tau", "1", "--friction", "--json"]) == 0
    qdd = json.loads(capsys.readouterr().out)["qdd"]
    np.testing.assert_allclose(qdd, screwdyn.forward_dynamics(arm, q, np.zeros(7), np.ones(7), friction=True),
                               rtol=1e-12)
    assert main(["mass-matrix", "panda", *args, "--json"]) == 0
    M = json.loads(capsys.readouterr().out)["M"]
    np.testing.assert_allclose(M, screwdyn.mass_matrix(arm, q), rtol=1e-12)
    assert main(["mass-matrix", "pendulum"]) == 0
    assert "0.1333" in capsys.readouterr().out


def test_linearize_matches_the_library(capsys):
    arm = models.load("planar_2r")
    q, qd, tau = [0.1, -0.2], [0.3, 0.4], [1.0, -2.0]
    assert main(["linearize", "planar_2r", "--q", "0.1", "-0.2", "--qd", "0.3,0.4", "--tau", "1", "-2", "--dt", "0.01",
                 "--scheme", "euler", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    A, B = screwdyn.linearize(arm, q, qd, tau, dt=0.01, scheme="euler")
    np.testing.assert_allclose(out["A"], A, rtol=1e-14)
    np.testing.assert_allclose(out["B"], B, rtol=1e-14)
    assert main(["linearize", "pendulum", "--q", "pi"]) == 0
    text = capsys.readouterr().out
    assert "A (2 x 2)" in text and "(unstable about this state)" in text


def test_info(capsys):
    assert main(["info", "puma560"]) == 0
    out = capsys.readouterr().out
    assert "puma560: 6 degrees of freedom (RRRRRR)" in out and "frame6" in out and "joint6" in out
    assert main(["info", "pendulum", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["dof"] == 1 and info["joints"][0]["armature"] == pytest.approx(0.05)


@pytest.mark.parametrize("controller", ["gravity", "pd", "computed-torque"])
def test_simulate_controllers(controller, tmp_path, capsys):
    out = tmp_path / "c.npz"
    assert main(["simulate", "planar_2r", "--duration", "1.5", "--controller", controller, "--target", "0.5", "-0.5",
                 "--npz", str(out)]) == 0
    tr = Trajectory.from_npz(out)
    if controller == "gravity":
        np.testing.assert_allclose(tr.q[-1], models.home("planar_2r"), atol=1e-9)
    elif controller == "computed-torque":      # the quintic ends at 0.8 x 1.5 s: on target, exactly
        np.testing.assert_allclose(tr.q[-1], [0.5, -0.5], atol=1e-9)
    else:
        np.testing.assert_allclose(tr.q[-1], [0.5, -0.5], atol=0.05)
    assert {"gravity": "gravity compensation", "pd": "PD + gravity", "computed-torque": "computed torque"}[controller] \
        in capsys.readouterr().out


def _furthest_beyond(out):
    line = next(ln for ln in out.splitlines() if "furthest beyond a position limit" in ln)
    return float(line.split(":")[1].split()[0])


def test_the_readme_first_command_keeps_the_panda_within_its_limits(tmp_path, capsys):
    """'screwdyn simulate --plot simulation.png': the panda tracks its quintic and stays within its
    joint limits; '--controller none' lets it fall against them: no joint beyond a limit by more
    than 0.05 rad (the soft limits of screwdyn.sim), the velocity limits it exceeds falling named."""
    assert main(["simulate", "--plot", str(tmp_path / "simulation.png"), "--npz", str(tmp_path / "s.npz")]) == 0
    out = capsys.readouterr().out
    assert _furthest_beyond(out) == 0.0 and "limit exceeded" not in out
    tr = Trajectory.from_npz(tmp_path / "s.npz")
    assert np.abs(tr.q[-1] - tr.q[0]).min() > 0.25                        # every joint moved
    assert main(["simulate", "--controller", "none", "--npz", str(tmp_path / "fall.npz")]) == 0
    out = capsys.readouterr().out
    fall = Trajectory.from_npz(tmp_path / "fall.npz")
    panda = models.load("panda")
    beyond = np.maximum(fall.q - panda.q_upper, panda.q_lower - fall.q).max()
    assert 0.0 < beyond < 0.05 and _furthest_beyond(out) == pytest.approx(beyond, abs=1e-3)
    assert "limit exceeded: panda_joint2: |qd| up to" in out
    assert np.isclose(fall.q[-1], panda.q_lower, atol=0.05).any()         # resting against a limit


def test_simulate_constant_tau_and_options(tmp_path, capsys):
    out = tmp_path / "p.csv"
    assert main(["simulate", "pendulum", "--q0", "0", "--tau", "0.5", "--no-friction", "--dt", "0.01",
                 "--duration", "0.1", "--integrator", "semi_implicit_euler", "--csv", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    data = np.genfromtxt(out, delimiter=",", names=True)
    np.testing.assert_allclose(data["tau_joint"], 0.5)
    assert main(["simulate", "pendulum", "--tau", "1", "--controller", "gravity"]) == 2
    assert "either --tau or --controller" in capsys.readouterr().err
    assert main(["simulate", "pendulum", "--q0", "1", "2"]) == 2
    assert "--q0: expected 1 numbers" in capsys.readouterr().err
    assert main(["simulate", "planar_2r", "--gravity", "0", "0", "0", "--duration", "0.1", "--q0", "0.3", "0.3",
                 "--controller", "none"]) == 0
    assert "change +0 J" in capsys.readouterr().out          # no gravity, at rest: nothing moves


def test_simulate_floating_robots_fall_freely(tmp_path, capsys):
    """A floating robot (the bundled Solo12) simulates passive by default: without contacts it
    falls freely, its base accelerating at g with its legs still, the energy kept and the
    quaternion unit. A controller is refused, saying why; the Panda on a free-flyer
    (--floating-base) has a massless base link, whose M is singular: a clear error."""
    out = tmp_path / "solo.npz"
    assert main(["simulate", "solo12", "--duration", "0.2", "--npz", str(out)]) == 0
    text = capsys.readouterr().out
    assert "18 degrees of freedom (13 joints)" in text and "passive" in text
    tr = Trajectory.from_npz(out)
    assert tr.q.shape == (201, 19)
    np.testing.assert_allclose(tr.qd[-1], np.r_[np.zeros(5), -9.81 * 0.2, np.zeros(12)], atol=1e-9)   # (w, v) of the base
    np.testing.assert_allclose(tr.q[:, 7:], np.broadcast_to(tr.q[0, 7:], (201, 12)), atol=1e-12)   # the legs still
    np.testing.assert_allclose(np.linalg.norm(tr.q[:, 3:7], axis=1), 1.0, atol=1e-14)
    assert abs(tr.total_energy[-1] - tr.total_energy[0]) < 1e-9
    assert main(["simulate", "solo12", "--controller", "pd"]) == 2
    assert "no actuator" in capsys.readouterr().err
    assert main(["simulate", "panda", "--floating-base", "--duration", "0.01"]) == 2
    assert "singular" in capsys.readouterr().err


def test_derive_lazily(capsys):
    assert main(["derive", "planar_2r"]) == 0
    out = capsys.readouterr().out
    assert "M" in out and "g" in out


def test_identify_and_bench_are_delegated(capsys, monkeypatch):
    import screwdyn.bench
    import screwdyn.cli
    seen = {}
    monkeypatch.setattr(screwdyn.cli, "ident_cli", lambda argv: seen.setdefault("identify", argv) and 0)
    monkeypatch.setattr(screwdyn.bench, "main", lambda argv: seen.setdefault("bench", argv) and 0)
    assert main(["identify", "data.csv", "--model", "ur5"]) == 0
    assert main(["bench", "--robots", "panda"]) == 0
    assert seen == {"identify": ["data.csv", "--model", "ur5"], "bench": ["--robots", "panda"]}
    monkeypatch.delattr(screwdyn.bench, "main")
    assert main(["bench"]) == 2
    assert "not available" in capsys.readouterr().err


def test_parse_vector():
    np.testing.assert_allclose(parse_vector("0, -pi/4 3pi/4 .5*pi -1e-3"),
                               [0, -np.pi / 4, 3 * np.pi / 4, 0.5 * np.pi, -1e-3])
    np.testing.assert_allclose(parse_vector("2", 3), [2, 2, 2])
    from screwdyn.cli import CLIError
    with pytest.raises(CLIError, match="not a number"):
        parse_vector("1, x")
    with pytest.raises(CLIError, match="expected 2 numbers"):
        parse_vector("1 2 3", 2)
