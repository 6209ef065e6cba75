"""What the shell's layout helpers print: ls columns that exactly fill the width, tables
two spaces apart, plurals, JSON with sorted keys."""

from __future__ import annotations

from shell.formatting import columns, plural, table, to_json


def test_columns_that_exactly_fill_the_width_are_taken() -> None:
    assert columns(["aa", "bb"], 8) == ["aa  bb"]
    assert columns(["aa", "bb"], 7) == ["aa", "bb"]


def test_a_table_separates_its_columns_by_two_spaces() -> None:
    assert table(["a", "bb"], [["xyz", 1]]) == ["a    bb", "xyz  1"]


def test_plural_is_singular_only_for_one() -> None:
    assert [plural(n, "record") for n in (0, 1, 2)] == ["0 records", "1 record", "2 records"]


def test_json_is_one_line_with_sorted_keys() -> None:
    assert to_json({"b": 1, "a": [1, 2]}) == '{"a": [1, 2], "b": 1}'
