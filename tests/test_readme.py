"""README.md's Python examples run as written: every ```python block, in order, in one fresh
interpreter (as a reader pastes them), in a temporary directory. A traceback names README.md and
the line of the README that failed."""
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
# An HTML comment right above a block, invisible on the rendered page, names what the block needs
# beyond the test extras: <!-- readme-test: needs viser -->. Such a block runs where it is installed.
NEEDS = re.compile(r"<!--\s*readme-test:\s*needs\s+([\w\s,.-]+?)\s*-->\s*$")


def python_blocks(text):
    """``(first line, code, needs)`` of each ```python block of ``text``: the README line number of
    its first line of code, the code, and the modules its marker names."""
    lines = text.splitlines()
    blocks, k = [], 0
    while k < len(lines):
        if lines[k].strip() == "```python":
            start = k + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            marker = NEEDS.match(lines[k - 1].strip()) if k else None
            needs = tuple(m.strip() for m in marker.group(1).split(",")) if marker else ()
            blocks.append((start + 1, "\n".join(lines[start:end]) + "\n", needs))
            k = end
        k += 1
    return blocks


RUNNER = textwrap.dedent("""
    import sys, time
    blocks = {blocks!r}
    namespace = {{"__name__": "__main__"}}
    for line, code in blocks:
        started = time.perf_counter()
        exec(compile("\\n" * (line - 1) + code, {readme!r}, "exec"), namespace)
        print(f"README.md line {{line}}: {{time.perf_counter() - started:.2f}} s", flush=True)
""")


def test_the_readme_python_blocks_run_in_order(tmp_path):
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 8, "the README's examples were not found"
    missing = {b[0]: [m for m in b[2] if importlib.util.find_spec(m) is None] for b in blocks}
    run = [(line, code) for line, code, _ in blocks if not missing[line]]
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-c", RUNNER.format(blocks=run, readme=str(README))], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert r.stdout.count("README.md line ") == len(run), r.stdout
    for line, absent in missing.items():
        if absent:   # (said in pytest's summary of warnings)
            warnings.warn(f"README.md line {line}: not run, it needs {', '.join(absent)}", stacklevel=1)


def test_the_block_extraction_finds_code_markers_and_line_numbers():
    text = "intro\n```python\na = 1\n```\n<!-- readme-test: needs viser, trimesh -->\n```python\nb = a\n```\n```bash\nls\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n", ()), (7, "b = a\n", ("viser", "trimesh"))]


def test_ci_runs_the_readme_test_command_apart_from_the_install_command():
    """The README's first two commands (install, test) use virtual environments of their own, so
    that the test command's editable install does not replace the first command's; .ci/run runs
    the test command verbatim."""
    text = README.read_text(encoding="utf-8")
    install, test = re.findall(r"```bash\n(.+?)\n```", text)[:2]
    venv = re.compile(r"python3 -m venv (\S+) && \. (\S+)/bin/activate")
    (a, a_bin), (b, b_bin) = venv.match(install).groups(), venv.match(test).groups()
    assert a == a_bin and b == b_bin and a != b
    assert 'pip install -e ".[test]"' in test and "pip install ." in install
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci
