"""A session that records its output, for the shell tests."""

from __future__ import annotations

from shell.session import Session


class Recorder:
    """A session whose output lines are kept, errors marked."""

    def __init__(self, output_format: str = "text") -> None:
        self.lines: list[tuple[str, bool]] = []
        self.session = Session(lambda line, error: self.lines.append((line, error)),
                               output_format=output_format)

    def run(self, *commands: str) -> list[str]:
        """Run commands; returns the lines they printed (errors prefixed by 'ERR ')."""
        start = len(self.lines)
        for command in commands:
            self.session.execute(command)
        return [("ERR " if error else "") + line for line, error in self.lines[start:]]
