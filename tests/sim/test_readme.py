"""The README's Hypothesis example runs as written and finds its planted bug."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def readme_snippet() -> str:
    """The Python block of the README's section on testing your own ideas."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Testing your own ideas", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README.md: no python block under 'Testing your own ideas'"
    return match.group(1)


def test_the_readme_user_test_finds_the_planted_bug_and_prints_shrunk_steps(
        tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(readme_snippet(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), "test_mine.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("FailoverAbortsInflight: ") for line in lines), done.stdout
    steps = [line for line in lines if line.startswith("state.")]
    assert steps[0].startswith("state.start(seed=")
    assert 2 <= len(steps) <= 6
    # the README shows the output the snippet prints: the steps exactly; the message with
    # its offsets masked, so that a change of the cluster's start-up records elsewhere does
    # not break this test (rerun the snippet and paste its output into README.md)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for step in steps:
        assert step in readme, f"README.md does not show {step!r}"
    message = next(x for x in lines if x.startswith("FailoverAbortsInflight"))
    shown = [x for x in readme.splitlines() if x.startswith("FailoverAbortsInflight")]
    assert [re.sub(r"\d+", "N", x) for x in shown] == [re.sub(r"\d+", "N", message)], shown
