"""Glob components and glob paths, following the cases of Kafka's ``GlobComponentTest`` and
``GlobVisitorTest``.

Ported: literal components (no glob characters, ``$`` and ``+`` included) match
only themselves, the empty component too; ``*`` matches any name, the empty one
too; ``?`` one character; ``{a,b}`` one alternative; and, over Kafka's small
tree with ``/foo`` as the working directory: ``*``, ``..``, ``../..`` (the root
has no parent), ``../z*``, ``../*/{beta,theta}``, a name that is not there and
an absolute ``/a?pha``.

Kafka checks the regular expression a glob becomes (``toRegularExpression``);
kraftsim matches globs with an automaton (``shell/glob.py``) and no regular
expression, so those cases are ported as the names each glob matches.
Where kraftsim differs on purpose: nested braces are globs here (Kafka treats a
component with nested braces, or an unclosed ``{``, as a literal name); an
unclosed ``{`` is an error; matches come in natural order (Kafka sorts names as
strings: ``10`` before ``9``).

Kafka's names: testStarGlob (test_a_star_lists_the_working_directory), testDotDot and
testDoubleDotDot (test_dot_dot_goes_up_and_stops_at_the_root), testZGlob
(test_a_glob_in_the_parent_directory), testBetaOrThetaGlob
(test_globs_in_two_components), testNotFoundGlob
(test_a_name_that_is_not_there_finds_nothing), testAbsoluteGlob
(test_an_absolute_glob_starts_at_the_root).
"""

from __future__ import annotations

import pytest

from shell.glob import Glob, is_glob
from shell.paths import PathError, expand, render
from shell.tree import Dir, Node, static_dir, text_file

# Kafka's test tree; every node is a directory but /zeta/c, a file
TREE: Dir = static_dir({
    "alpha": static_dir({"beta": static_dir({"gamma": static_dir({})}),
                         "theta": static_dir({})}),
    "foo": static_dir({"a": static_dir({}), "beta": static_dir({})}),
    "zeta": static_dir({"c": text_file("")}),
    "zzz": static_dir({}),
})
WORKING_DIRECTORY = ("foo",)


def node_at(*path: str) -> Node:
    node: Node = TREE
    for name in path:
        assert isinstance(node, Dir)
        child = node.child(name)
        assert child is not None
        node = child
    return node


def visit(pattern: str) -> list[str]:
    """The absolute paths ``pattern`` names from /foo, each checked to be the tree's node."""
    found = expand(TREE, WORKING_DIRECTORY, pattern)
    for path, node in found:
        assert node_at(*path).is_dir == node.is_dir
    return [render(path) for path, _ in found]


@pytest.mark.parametrize("component", ["abc", "", "foobar_123", "$blah+",
                                       "does not need a regex, actually"])
def test_a_literal_component_matches_itself_only(component: str) -> None:
    assert not is_glob(component)
    glob = Glob(component)
    assert glob.matches(component)
    assert not glob.matches(component + "foo")


def test_a_component_with_a_glob_character_is_a_glob() -> None:
    assert all(is_glob(pattern) for pattern in ("$blah*", "*", "foo{bar,baz}", "b?b"))
    dollar = Glob("$blah*")
    assert dollar.matches("$blah") and dollar.matches("$blahblah")
    assert not dollar.matches("blah") and not dollar.matches("x$blah")


def test_a_star_matches_any_name() -> None:
    star = Glob("*")
    assert star.matches("") and star.matches("anything")


def test_a_question_mark_matches_one_character() -> None:
    question = Glob("b?b")
    assert not question.matches("")
    assert question.matches("bob") and question.matches("bib")
    assert not question.matches("bic")


def test_braces_match_one_alternative() -> None:
    either = Glob("foo{bar,baz}")
    assert either.matches("foobar") and either.matches("foobaz")
    assert not any(either.matches(name) for name in ("foobah", "foo", "baz"))


def test_a_star_lists_the_working_directory() -> None:
    assert visit("*") == ["/foo/a", "/foo/beta"]


@pytest.mark.parametrize("pattern", ["..", "../.."])
def test_dot_dot_goes_up_and_stops_at_the_root(pattern: str) -> None:
    assert visit(pattern) == ["/"]


def test_a_glob_in_the_parent_directory() -> None:
    assert visit("../z*") == ["/zeta", "/zzz"]


def test_globs_in_two_components() -> None:
    assert visit("../*/{beta,theta}") == ["/alpha/beta", "/alpha/theta", "/foo/beta"]


def test_a_name_that_is_not_there_finds_nothing() -> None:
    with pytest.raises(PathError, match="epsilon: no such file or directory"):
        visit("epsilon")


def test_an_absolute_glob_starts_at_the_root() -> None:
    assert visit("/a?pha") == ["/alpha"]


def test_a_glob_below_a_file_finds_nothing() -> None:
    """Kafka's visitor does not look into a file for a glob's matches."""
    with pytest.raises(PathError):
        visit("/zeta/c/*")
