"""Command lines, paths and ``ls`` output, following the cases of Kafka's ``CommandTest``,
``CommandUtilsTest`` and ``LsCommandHandlerTest``.

Ported: Kafka's shell commands are parsed and run with their optional
arguments (cd with and without a target, history with and without a count, ls
with none or several); an empty command line does nothing (CommandTest). A path
split on any number of slashes, ``.`` and ``..`` dropped at the root and names
that merely start with a dot kept (CommandUtilsTest). The column layout of
``ls``: one column when the width leaves room for none, columns as wide as
their longest name plus two, as many as fit; files first, then each directory
under a header, blank lines between (LsCommandHandlerTest).

Where kraftsim differs on purpose: an unknown command gets kraftsim's one-line
error with a "did you mean" (Kafka: ``invalid choice: 'blah' (choose from ...)``,
listing its ten commands; kraftsim has many more); a line of ``ls`` ends after
its last name (Kafka pads the last name of a short line to its column width).
"""

from __future__ import annotations

import pytest

from shell.formatting import columns
from shell.paths import normalize
from shell.tree import Dir, static_dir, text_file
from tests.shell.shell_recorder import Recorder

TREE: Dir = static_dir({
    "foo": text_file("1"), "foobarbaz": text_file("2"), "quux": text_file("3"),
    "abc": static_dir({"x": text_file("4")}), "123": static_dir({"y": text_file("5")}),
    "some": static_dir({
        "dir": static_dir({"supercalifragalistic": text_file("6")}),
        "other": static_dir({"dir": static_dir({
            name: text_file(name)
            for name in ("capability", "delegation", "elephant", "fungible", "green")})}),
    }),
})


def shell_over_tree(width: int = 80) -> Recorder:
    rec = Recorder()
    rec.session.root = lambda: TREE  # type: ignore[method-assign]
    rec.session.width = width
    return rec


@pytest.mark.parametrize(("line", "output"), [
    ("cat foo", ["1"]),
    ("cd", []),
    ("cd abc", []),
    ("ls", ["123  abc  foo  foobarbaz  quux  some"]),
    ("ls abc 123", ["abc:", "x", "", "123:", "y"]),
    ("pwd", ["/"]),
    ("help", None),
    ("exit", []),
])
def test_kafkas_commands_are_parsed_and_run(line: str, output: list[str] | None) -> None:
    rec = shell_over_tree()
    printed = rec.run(line)
    assert not any(text.startswith("ERR ") for text in printed), printed
    if output is not None:
        assert printed == output


def test_cd_without_a_target_goes_to_the_root() -> None:
    rec = shell_over_tree()
    assert rec.run("cd some/other", "pwd", "cd", "pwd") == ["/some/other", "/"]


def test_history_shows_all_entries_or_the_last_n() -> None:
    rec = shell_over_tree()
    rec.run("pwd", "ls abc", "cat foo")
    assert rec.run("history 3") == ["    2  ls abc", "    3  cat foo", "    4  history 3"]
    assert len(rec.run("history")) == 5


def test_an_unknown_command_is_one_error_line() -> None:
    assert shell_over_tree().run("blah") == [
        "ERR blah: unknown command; 'help' lists the commands"]


@pytest.mark.parametrize("line", ["", "   "])
def test_an_empty_command_line_does_nothing(line: str) -> None:
    rec = shell_over_tree()
    assert rec.run(line) == [] and rec.session.history == []
    assert rec.session.exit_code == 0


@pytest.mark.parametrize("text", ["/alpha/beta", "//alpha/beta/"])
def test_a_path_splits_on_any_number_of_slashes(text: str) -> None:
    assert normalize((), text) == ("alpha", "beta")


@pytest.mark.parametrize(("text", "path"), [
    ("../keep/keep2", ("keep", "keep2")),
    ("./keep/keep2", ("keep", "keep2")),
    ("./.keep/keep2", (".keep", "keep2")),
    ("../.keep/keep2", (".keep", "keep2")),
])
def test_dot_components_are_dropped_and_dot_names_kept(text: str, path: tuple[str, ...]) -> None:
    assert normalize((), text) == path


@pytest.mark.parametrize(("width", "names", "lines"), [
    (0, ["abc", "def"], ["abc", "def"]),
    (4, ["abc", "def", "ghi"], ["abc", "def", "ghi"]),
    (80, ["a", "abcdef", "beta"], ["a  abcdef  beta"]),
    (18, ["alphabet", "beta", "gamma", "theta", "zeta"],
     ["alphabet  theta", "beta      zeta", "gamma"]),
])
def test_the_column_layout(width: int, names: list[str], lines: list[str]) -> None:
    """testCalculateColumnSchema and testPrintEntries: widths 3, 8, 6 for the three names at
    80 columns; two columns of widths 10 and 7 for the five at 18."""
    assert columns(names, width) == lines


def test_a_short_last_column_fills_from_the_top() -> None:
    assert columns(["a", "bb", "c", "dd", "e", "ff", "g"], 12) == ["a   dd  g", "bb  e", "c   ff"]


def test_files_then_each_directory_under_its_header() -> None:
    """testPrintTargets, through the command: each directory is introduced by its last path
    component, as Kafka's LsCommandHandler names its targets."""
    rec = shell_over_tree(width=18)
    assert rec.run("ls foo foobarbaz quux /some/dir /some/other/dir") == [
        "foo        quux",
        "foobarbaz",
        "",
        "dir:",
        "supercalifragalistic",
        "",
        "dir:",
        "capability",
        "delegation",
        "elephant",
        "fungible",
        "green",
    ]
