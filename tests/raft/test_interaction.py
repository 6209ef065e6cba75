"""Node-level raft transcripts: tests/raft/transcripts/*.txt run through the interpreter.

Each file is a sequence of commands with the output they must print (see
tests/raft/interaction.py for the commands). After an intended change of
behaviour or output, regenerate and review the diff::

    .venv/bin/python -m pytest -q tests/raft/test_interaction.py --rewrite
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.raft import datadriven
from tests.raft.interaction import Interaction

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*.txt"))


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_transcript(path: Path, request: pytest.FixtureRequest) -> None:
    text = path.read_text(encoding="utf-8")
    script = datadriven.parse(text)
    datadriven.run(script, Interaction().execute)
    if request.config.getoption("rewrite"):
        path.write_text(datadriven.render(script), encoding="utf-8")
        return
    problems = datadriven.differences(path.name, script)
    if problems:
        pytest.fail("\n".join([*problems, "(rerun with --rewrite to accept the new output)"]),
                    pytrace=False)


def test_there_are_enough_transcripts() -> None:
    assert len(TRANSCRIPTS) >= 15


def test_transcripts_round_trip() -> None:
    for path in TRANSCRIPTS:
        text = path.read_text(encoding="utf-8")
        assert datadriven.render(datadriven.parse(text)) == text, path.name


def test_interpreter_drives_raft_alone() -> None:
    """The interpreter talks to RaftNode directly: nothing of the simulator is involved."""
    for module in ("interaction.py", "commands.py", "render.py", "datadriven.py"):
        tree = ast.parse((HERE / module).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] not in ("sim", "shell", "controller", "broker"), \
                    f"{module} imports {name}"


def test_a_mismatch_is_reported_as_a_unified_diff() -> None:
    script = datadriven.parse("add-nodes 1\n----\nwrong\n")
    datadriven.run(script, Interaction().execute)
    problems = datadriven.differences("x.txt", script)
    assert problems[0] == "x.txt:1: add-nodes 1"
    assert "-wrong" in problems
    assert any(line.startswith("+start 1") for line in problems)


def test_unknown_commands_and_options_are_reported() -> None:
    interaction = Interaction()
    assert interaction.execute("frobnicate") == ["error: CommandError: unknown command "
                                                 "'frobnicate'"]
    assert interaction.execute("add-nodes 3 colour=red") == [
        "error: CommandError: add-nodes: unknown option colour"]
