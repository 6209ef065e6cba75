"""Shell input that used to take exponential or quadratic time: globs and long words.

Sizes are chosen so that the old code (a regular expression per glob,
``shlex`` for words) would run for hours; the assertions are on behaviour,
never on timing.
"""

from __future__ import annotations

import itertools
import random
import shlex
from collections.abc import Callable
from functools import cache

import pytest

from shell.errors import CommandError
from shell.glob import Glob, GlobError, is_glob, unescape
from shell.session import split_words
from tests.shell.shell_recorder import Recorder

Shell = Callable[..., Recorder]


def reference_match(pattern: str, name: str) -> bool:
    """A slow, obviously right matcher: brace expansion, then recursion on the rest."""
    return any(_simple(tuple(alternative), name) for alternative in _expand_braces(pattern))


def _tokens(pattern: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(("lit", pattern[i + 1]))
            i += 2
            continue
        ch = pattern[i]
        out.append((ch, ch) if ch in "*?{},\\" else ("lit", ch))
        i += 1
    return out


def _expand_braces(pattern: str) -> list[list[tuple[str, str]]]:
    def group(tokens: list[tuple[str, str]], i: int, top: bool
              ) -> tuple[list[list[tuple[str, str]]], int]:
        alternatives: list[list[list[tuple[str, str]]]] = [[[]]]
        while i < len(tokens):
            kind, ch = tokens[i]
            if kind == "{":
                inner, i = group(tokens, i + 1, False)
                alternatives[-1] = [a + b for a in alternatives[-1] for b in inner]
                continue
            if kind == "," and not top:
                alternatives.append([[]])
            elif kind == "}" and not top:
                return [a for alt in alternatives for a in alt], i + 1
            else:
                token = ("lit", ch) if kind in ",}\\" else (kind, ch)
                alternatives[-1] = [[*a, token] for a in alternatives[-1]]
            i += 1
        if not top:
            raise GlobError("unbalanced")
        return [a for alt in alternatives for a in alt], i
    return group(_tokens(pattern), 0, True)[0]


def _simple(tokens: tuple[tuple[str, str], ...], name: str) -> bool:
    @cache
    def go(t: int, n: int) -> bool:
        if t == len(tokens):
            return n == len(name)
        kind, ch = tokens[t]
        if kind == "*":
            return go(t + 1, n) or (n < len(name) and go(t, n + 1))
        if n == len(name):
            return False
        return (kind == "?" or ch == name[n]) and go(t + 1, n + 1)
    return go(0, 0)


@pytest.mark.parametrize(("pattern", "name", "expected"), [
    ("a*", "abc", True), ("*c", "abc", True), ("a?c", "abc", True), ("a?c", "ac", False),
    ("{ab,x}c", "abc", True), ("{ab,x}c", "xc", True), ("{ab,x}c", "c", False),
    ("{a,{b,c}d}", "cd", True), ("{}x", "x", True), ("{,a}x", "x", True),
    ("a\\*", "a*", True), ("a\\*", "ab", False), ("a,b}", "a,b}", True),
    ("\\{a,b}", "{a,b}", True), ("*\\?", "x?", True), ("trail\\", "trail\\", True),
    ("*" * 60 + "x", "version", False), ("*" * 60 + "n", "version", True),
])
def test_glob_cases(pattern: str, name: str, expected: bool) -> None:
    assert Glob(pattern).matches(name) is expected
    assert reference_match(pattern, name) is expected


def test_glob_agrees_with_a_brute_force_matcher() -> None:
    rng = random.Random(868)
    for _ in range(3000):
        pattern = "".join(rng.choice("ab*?{},\\") for _ in range(rng.randint(0, 8)))
        try:
            glob = Glob(pattern)
        except GlobError:
            with pytest.raises(GlobError):
                reference_match(pattern, "")
            continue
        for length in range(5):
            for name in itertools.islice(itertools.product("ab,}", repeat=length), 12):
                text = "".join(name)
                assert glob.matches(text) is reference_match(pattern, text), (pattern, text)


def test_unclosed_brace_is_an_error() -> None:
    with pytest.raises(GlobError, match="unbalanced"):
        Glob("{a,{b}")


def test_huge_patterns_finish() -> None:
    """Each of these is exponential for a backtracking matcher."""
    assert not Glob("*" * 10_000 + "x").matches("version")
    assert not Glob("*a" * 5_000).matches("a" * 4_000 + "b")
    assert Glob("*a?" * 3_000 + "*").matches("ab" * 3_000)
    assert not Glob("{*a}" * 3_000).matches("a" * 200 + "b")
    assert Glob("{" + ",".join("a" * i for i in range(200)) + "}").matches("a" * 199)
    assert not Glob("?" * 10_000).matches("v" * 9_999)
    assert Glob("{,}" * 64 + "v").matches("v")  # 2**64 ways through the empty choices


def test_is_glob_and_unescape_on_long_input() -> None:
    assert not is_glob("\\" * 20_001 + "*")  # the last backslash escapes the star
    assert is_glob("\\\\" * 10_000 + "*")
    assert not is_glob("\\*" * 10_000)
    assert unescape("\\a" * 10_000) == "a" * 10_000


def test_ls_with_sixty_stars_and_ten_thousand(shell: Shell) -> None:
    rec = shell()
    stars60 = "/local/" + "*" * 60 + "x"
    assert rec.run(f"ls {stars60}") == [f"ERR ls: {stars60}: no such file or directory"]
    assert rec.run("ls /" + "*" * 60 + "l") == ["node", "version"]
    huge = "/local/" + "*?" * 5_000 + "x"
    assert rec.run(f"ls {huge}") == [f"ERR ls: {huge}: no such file or directory"]


def reference_words(line: str) -> list[str] | None:
    """What the shell split words with before (``shlex``), None for a parse error."""
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.escape = ""
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def test_split_words_agrees_with_shlex() -> None:
    rng = random.Random(1)
    for _ in range(20_000):
        line = "".join(rng.choice("ab \t'\"\\*{}=#\n\x0bé") for _ in range(rng.randint(0, 12)))
        try:
            words: list[str] | None = split_words(line)
        except CommandError:
            words = None
        assert words == reference_words(line), line


def test_split_words_on_huge_lines() -> None:
    assert split_words("x" * 1_000_000) == ["x" * 1_000_000]
    assert split_words("a " * 300_000) == ["a"] * 300_000
    assert split_words("'a'" * 300_000) == ["a" * 300_000]
    with pytest.raises(CommandError, match="no closing quotation"):
        split_words("'" + "a" * 1_000_000)
