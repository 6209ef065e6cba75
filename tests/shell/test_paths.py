"""Paths and globs over a small tree: what ls/cat/cd resolve, and their one-line errors."""

from __future__ import annotations

import pytest

from shell.glob import is_glob
from shell.paths import PathError, expand, glob_matcher, normalize, render, suggestion
from shell.tree import Dir, static_dir, text_file

ROOT: Dir = static_dir({
    "image": static_dir({
        "topics": static_dir({"a1": text_file(1), "a2": text_file(2), "b1": text_file(3),
                              "x.y": text_file(4), "10": text_file(5), "9": text_file(6)}),
        "provenance": text_file("offset 3"),
    }),
    "local": static_dir({"version": text_file("v")}),
})


def names(pattern: str, cwd: tuple[str, ...] = ()) -> list[str]:
    return [render(path) for path, _ in expand(ROOT, cwd, pattern)]


def test_dot_dotdot_and_relative_paths() -> None:
    assert normalize(("image", "topics"), "../provenance") == ("image", "provenance")
    assert normalize(("image",), "/../..//local/./version") == ("local", "version")
    assert names("..", ("image", "topics")) == ["/image"]
    assert names("a1", ("image", "topics")) == ["/image/topics/a1"]


@pytest.mark.parametrize(("pattern", "expected"), [
    ("/image/topics/a*", ["/image/topics/a1", "/image/topics/a2"]),
    ("/image/topics/?1", ["/image/topics/a1", "/image/topics/b1"]),
    ("/image/topics/{b1,a2}", ["/image/topics/a2", "/image/topics/b1"]),
    ("/image/topics/{a,b}{1,2}", ["/image/topics/a1", "/image/topics/a2", "/image/topics/b1"]),
    ("/image/topics/x\\.y", ["/image/topics/x.y"]),
    ("/*/topics/9", ["/image/topics/9"]),
    ("/image/topics/*", ["/image/topics/9", "/image/topics/10", "/image/topics/a1",
                         "/image/topics/a2", "/image/topics/b1", "/image/topics/x.y"]),
])
def test_globs_match_in_natural_order(pattern: str, expected: list[str]) -> None:
    assert names(pattern) == expected


def test_escaped_glob_characters_are_literal() -> None:
    assert glob_matcher("a\\*").matches("a*")
    assert not glob_matcher("a\\*").matches("ab")


@pytest.mark.parametrize(("pattern", "message"), [
    ("/image/topix", "/image/topix: no such file or directory (did you mean /image/topics?)"),
    ("/image/topics/c*", "/image/topics/c*: no such file or directory"),
    ("/image/provenance/x", "/image/provenance/x: /image/provenance is not a directory"),
    ("/image/topics/11", "/image/topics/11: no such file or directory"),
    ("/image/topics/{a", "unbalanced '{' in '{a'"),
])
def test_errors_are_one_line(pattern: str, message: str) -> None:
    with pytest.raises(PathError) as caught:
        expand(ROOT, (), pattern)
    assert str(caught.value) == message


@pytest.mark.parametrize(("pattern", "message"), [
    ("/image/topics/19", "/image/topics/19: no such file or directory"),  # no numeric hint
    ("/image/topics/a1x*", "/image/topics/a1x*: no such file or directory"),  # a glob: none
    ("/image/topics/a\\*", "/image/topics/a\\*: no such file or directory"),  # literal a*
])
def test_no_hint_for_numbers_or_globs_and_escaped_stars_are_literal(
        pattern: str, message: str) -> None:
    with pytest.raises(PathError) as caught:
        expand(ROOT, (), pattern)
    assert str(caught.value) == message


def test_dotdot_reaches_the_root_and_many_matches_go_up_to_one_parent() -> None:
    assert normalize(("image",), "..") == ()
    assert names("..", ("image",)) == ["/"]
    assert names("/image/topics/*/..") == ["/image/topics"]


def test_only_unescaped_glob_characters_make_a_glob() -> None:
    assert is_glob("a*") and is_glob("a?") and is_glob("{a,b}") and is_glob("\\a*")
    assert not is_glob("a\\*") and not is_glob("a\\?b") and not is_glob("\\{a,b}")


@pytest.mark.parametrize(("pattern", "name", "matched"), [
    ("ab*b", "ab", False),  # the first and last runs may not overlap
    ("ab*b", "abb", True),
    ("*abc*c*", "xabcx", False),  # a later run starts after the earlier one ends
    ("*abc*c*", "xabcc", True),
    ("{a?,b}", "ax", True),  # ? inside braces
    ("{a?,b}", "a", False),
    ("{a*,b}", "a", True),  # * inside braces matches nothing too
    ("{x,y}*", "x", True),
    ("{x,y}*z", "xyyz", True),
])
def test_glob_runs_and_braces_match_exactly(pattern: str, name: str, matched: bool) -> None:
    assert glob_matcher(pattern).matches(name) is matched


def test_a_hint_is_looked_for_in_directories_of_up_to_5000_names() -> None:
    def listing(count: int) -> Dir:
        return static_dir({f"topic-{i:05d}x": text_file(i) for i in range(count)})

    assert suggestion(listing(5000), "topic-00007") == "topic-00007x"
    assert suggestion(listing(5001), "topic-00007") is None  # too many to scan
    assert suggestion(listing(10), "42") is None  # a number: a close one is no hint
