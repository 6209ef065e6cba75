"""The real interactive shell in a pseudo-terminal, typed into as a person would."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect

PROMPT = r"\] /\S* >>"


def spawn(history: Path) -> pexpect.spawn:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(history.parent),
           "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "LANG": "C.UTF-8"}
    return pexpect.spawn(sys.executable, ["-m", "kraftsim.cli", "shell", "--demo", "--history-file",
                                          str(history)],
                         env=env, encoding="utf-8", timeout=30, dimensions=(40, 160),
                         cwd=str(Path(__file__).resolve().parents[2]))


def test_completion_history_error_and_exit(tmp_path: Path) -> None:
    history = tmp_path / "history"
    child = spawn(history)
    try:
        child.expect("kraftsim metadata shell")
        child.expect(PROMPT)
        child.send("ls /image/fea")
        child.send("\t")  # completes the path to /image/features/
        child.expect("tures/")
        child.send("\r")
        child.expect("metadataVersion +zkMigrationState")
        child.expect(PROMPT)
        child.send("lss /\r")
        child.expect(r"lss: unknown command \(did you mean ls\?\)")
        child.expect(PROMPT)
        child.send("cd /image\r")
        child.expect(r"\] /image >>")
        child.send("\x1b[A\x1b[A\x1b[A")  # up three times: the completed ls
        child.send("\r")
        child.expect("metadataVersion +zkMigrationState")
        child.expect(PROMPT)
        child.send("exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    saved = [line[1:] for line in history.read_text().splitlines() if line.startswith("+")]
    assert saved == ["ls /image/features/", "lss /", "cd /image", "ls /image/features/", "exit"]


def test_history_persists_into_the_next_session(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text("\n# 2024-01-01 00:00:00\n+cat /local/node\n")
    child = spawn(history)
    try:
        child.expect(PROMPT)
        child.send("\x1b[A\r")  # the previous session's last command
        child.expect("broker 0: the last image it published")
        child.expect(PROMPT)
        child.send("history\r")
        child.expect(r"1  cat /local/node")
        child.expect(PROMPT)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
