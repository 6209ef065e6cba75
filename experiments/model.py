"""The shapes every experiment shares: columns, parameters, a run's spec, errors.

An experiment is a pure function of (scenario, parameters, seed) that returns
one row: a dict whose keys are its columns. Nothing here imports Spark, so a
run (and its replay) works in any Python process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Any

import msgspec

from sim.settings import SettingError, parse_int, shown

Row = dict[str, Any]
"""One result row: column name -> value (int, str, bool, list of int, or None)."""

ParamValue = int | str
"""A parameter's value after parsing."""

COLUMN_KINDS = ("string", "long", "bool", "long[]")
"""The value kinds a column may have (long[]: a list of integers)."""


class ExperimentError(ValueError):
    """Bad input to an experiment (unknown name, scenario, parameter or value)."""


class Column(msgspec.Struct, frozen=True):
    """One column of an experiment's result rows."""

    name: str
    kind: str
    """One of :data:`COLUMN_KINDS`."""
    doc: str
    nullable: bool = False


class Param(msgspec.Struct, frozen=True):
    """A parameter of an experiment.

    ``default`` is a tuple of values: with more than one the parameter is an
    axis of the default grid (every value is swept). ``choices`` (for strings)
    lists the legal values; an empty tuple allows any value of the type.
    """

    name: str
    kind: type[int] | type[str]
    default: tuple[ParamValue, ...]
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    """Integers: the bounds, checked before any run starts (every number has a maximum)."""

    def parse(self, text: str) -> ParamValue:
        """One value from its text; raises ExperimentError naming the parameter."""
        if self.kind is int:
            try:
                return parse_int(self.name, text, self.minimum, self.maximum)
            except SettingError as exc:
                if exc.problem.startswith("must be an integer"):
                    raise ExperimentError(f"parameter {self.name}: {shown(text)} is not an "
                                          f"integer") from None
                raise ExperimentError(f"parameter {self.name}: {exc.problem}") from None
        if self.choices and text not in self.choices:
            what = "scenario" if self.name == "scenario" else f"value for {self.name}"
            raise ExperimentError(f"unknown {what} {text!r}; choose from "
                                  f"{', '.join(self.choices)}")
        return text


class RunSpec(msgspec.Struct, frozen=True):
    """One run of a sweep: what to run and with which seed."""

    experiment: str
    params: dict[str, ParamValue]
    """Every parameter, ``scenario`` included, as a single value."""
    master_seed: int
    index: int
    """The run's number within its grid cell (cells of one scenario share seeds)."""
    seed: int

    @property
    def scenario(self) -> str:
        """The run's scenario."""
        return str(self.params["scenario"])


RunFunction = Callable[[RunSpec, "IO[bytes] | None"], Row]
"""Runs one spec, writing the simulation's trace to the stream if given."""


class Experiment(msgspec.Struct, frozen=True):
    """An experiment: its parameters (``scenario`` first), columns and run function."""

    name: str
    doc: str
    params: tuple[Param, ...]
    columns: tuple[Column, ...]
    run: RunFunction

    def param(self, name: str) -> Param:
        """The parameter called ``name``; raises ExperimentError if there is none."""
        for param in self.params:
            if param.name == name:
                return param
        raise ExperimentError(f"unknown parameter {name!r} of experiment {self.name}; "
                              f"parameters: {', '.join(p.name for p in self.params)}")

    def defaults(self) -> dict[str, tuple[ParamValue, ...]]:
        """Every parameter's default values."""
        return {p.name: p.default for p in self.params}

    def check_row(self, row: Mapping[str, Any]) -> None:
        """Raise ValueError unless ``row`` has exactly this experiment's columns."""
        names = [c.name for c in self.columns]
        if list(row) != names:
            missing = sorted(set(names) - set(row))
            extra = sorted(set(row) - set(names))
            raise ValueError(f"{self.name} row: missing {missing}, unexpected {extra}")
