"""Every golden transcript under transcripts/ gives exactly its stored output.

Regenerate one after an intended change with ``kraftsim run --rewrite FILE``
and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kraftsim.run import differences, execute
from shell import transcript
from shell.session import EXIT_VIOLATION

TRANSCRIPTS = sorted((Path(__file__).parent / "transcripts").glob("*.txt"))


def test_there_are_enough_transcripts() -> None:
    assert len(TRANSCRIPTS) >= 20


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    script = transcript.parse(path.read_text(encoding="utf-8"))
    session = execute(script)
    assert differences(path.name, script) == []
    assert session.exit_code != EXIT_VIOLATION, "an invariant was violated"


def test_transcript_layout_round_trips() -> None:
    for path in TRANSCRIPTS:
        text = path.read_text(encoding="utf-8")
        assert transcript.render(transcript.parse(text)) == text, path.name


def test_blank_lines_in_output_use_the_double_fence() -> None:
    script = transcript.parse("help\n")
    script.entries[0].actual = ["a", "", "b"]
    text = transcript.render(script)
    assert text == "help\n----\n----\na\n\nb\n----\n----\n"
    assert transcript.parse(text).entries[0].expected == ["a", "", "b"]



def test_a_script_opening_with_a_blank_line_and_no_final_newline_keeps_its_last_command(
        ) -> None:
    parsed = transcript.parse("\n# a comment\ncluster controllers=1 brokers=1 seed=4\nseed")
    assert [(entry.command, entry.line) for entry in parsed.entries] == [
        ("cluster controllers=1 brokers=1 seed=4", 3), ("seed", 4)]


def test_the_files_final_newline_is_not_a_blank_output_line() -> None:
    """An unclosed double fence runs to the end of the file, its final newline left out."""
    parsed = transcript.parse("help\n----\n----\na\n\nb\n")
    assert parsed.entries[0].expected == ["a", "", "b"]
