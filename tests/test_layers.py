"""The house plan as a test: which package may import which, and what the pure cores may use.

This file is the keeper of the layer table in ``docs/architecture.md``. An
import only points down the table; every ``.py`` file of every package is
parsed with :mod:`ast`, so imports inside functions and ``if TYPE_CHECKING:``
blocks count as much as the ones at the top of a module.

The pure cores (``raft``, ``metadata``, ``kafka_format``, ``controller``,
``broker``) run inside one deterministic simulation: no wall clock, no
threads, no sockets, no processes, no file system, and randomness only as the
``random.Random`` that ``sim/`` hands in. ``hash()`` is salted per process
(``PYTHONHASHSEED``), so the cores may not call it either, with one documented
exception below.

The checkers take a root directory, so that the planted-violation test can
run them over a scratch copy of the tree and prove that they fail.
"""

from __future__ import annotations

import ast
import shutil
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The layer table, bottom first: each package and the packages it may import
# (besides itself and the standard library).
LAYERS: dict[str, frozenset[str]] = {
    "raft": frozenset(),
    "metadata": frozenset(),
    "kafka_format": frozenset({"raft", "metadata"}),
    "controller": frozenset({"raft", "metadata"}),
    "broker": frozenset({"raft", "metadata"}),
    "sim": frozenset({"raft", "metadata", "kafka_format", "controller", "broker"}),
    "shell": frozenset({"raft", "metadata", "kafka_format", "controller", "broker", "sim"}),
    "experiments": frozenset({"raft", "metadata", "kafka_format", "controller", "broker", "sim"}),
    "bench": frozenset(
        {"raft", "metadata", "kafka_format", "controller", "broker", "sim", "shell",
         "experiments"}
    ),
    "kraftsim": frozenset(
        {"raft", "metadata", "kafka_format", "controller", "broker", "sim", "shell",
         "experiments", "bench"}
    ),
}

# Third-party distributions each package may import, by import name. Adding a
# dependency to a layer is a decision: make it here, in one line.
THIRD_PARTY: dict[str, frozenset[str]] = {
    "raft": frozenset({"msgspec"}),
    "metadata": frozenset({"msgspec", "immutables"}),
    "kafka_format": frozenset({"msgspec", "google_crc32c", "cramjam"}),
    "controller": frozenset({"msgspec", "immutables"}),
    "broker": frozenset({"msgspec", "immutables"}),
    # hypothesis and pytest: sim/testing only (the kraftsim[testing] extra)
    "sim": frozenset({"msgspec", "immutables", "hypothesis", "pytest"}),
    "shell": frozenset({"msgspec", "prompt_toolkit"}),
    "experiments": frozenset({"msgspec", "pyspark", "pandas", "pyarrow", "matplotlib"}),
    "bench": frozenset({"msgspec", "google_crc32c", "pandas", "pyarrow", "immutables"}),
    "kraftsim": frozenset({"msgspec"}),
}

PURE_CORES = ("raft", "metadata", "kafka_format", "controller", "broker")

# Standard-library modules a pure core may not import: wall clock, concurrency,
# the network, processes, the file system, and unseeded randomness.
IMPURE_MODULES = frozenset({
    "asyncio", "concurrent", "datetime", "multiprocessing", "os", "pathlib", "secrets",
    "selectors", "shutil", "signal", "socket", "subprocess", "tempfile", "threading", "time",
    "uuid",
})

# Builtins a pure core may not use: they read or write files or the terminal.
IMPURE_BUILTINS = frozenset({"open", "input", "breakpoint"})

# Exceptions (modules or builtins), by file relative to the root.
# kafka_format/files.py is the one module of the file format that reads and
# writes files (the rest of kafka_format is a pure bytes <-> records codec).
IMPURE_ALLOWED: dict[str, frozenset[str]] = {
    "kafka_format/files.py": frozenset({"os", "pathlib", "open"}),
}

# Where a pure core may call hash(), by (file, enclosing function).
# metadata/image.py digest_of: MetadataImage.digest is a sum of per-entry
# hashes, compared only inside one process (MetadataImage.same_content, the
# invariant checker's set of seen states); it never orders an iteration and
# never leaves the process. partitions_digest sums digest_of's terms of many
# partitions at once, and partition_change_digest one replaced partition's, for the
# same digest.
HASH_ALLOWED = frozenset({("metadata/image.py", "digest_of"),
                          ("metadata/image.py", "partitions_digest"),
                          ("metadata/image.py", "partition_change_digest")})

# The only attribute of the random module a pure core may touch: the class of
# the seeded generator that sim/ hands in.
RANDOM_ALLOWED = frozenset({"Random"})


@dataclass(frozen=True, order=True)
class Violation:
    """One broken rule at one place in the tree."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Import:
    """One imported module as written, resolved to an absolute dotted name."""

    line: int
    module: str
    names: tuple[str, ...] = ()

    @property
    def top(self) -> str:
        """The top-level package or module imported."""
        return self.module.split(".")[0]


def source_files(root: Path, package: str) -> list[Path]:
    """Every .py file of ``package`` under ``root``, sorted."""
    return sorted((root / package).rglob("*.py"))


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _module_parts(root: Path, path: Path) -> list[str]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return parts


def imports_of(root: Path, path: Path, tree: ast.Module | None = None) -> Iterator[Import]:
    """Every import in one file, wherever it sits (functions, TYPE_CHECKING, ...).

    Relative imports are resolved against the file's package; calls of
    ``importlib.import_module`` / ``__import__`` with a literal name count too.
    """
    if tree is None:
        tree = _parse(path)
    parts = _module_parts(root, path)
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level == 0:
                yield Import(node.lineno, node.module or "", names)
                continue
            package = parts if is_package else parts[:-1]
            base = package[: len(package) - (node.level - 1)]
            if node.level - 1 >= len(package):
                # Past the top-level package: Python refuses it; report it as written.
                yield Import(node.lineno, "." * node.level + (node.module or ""), names)
                continue
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield Import(node.lineno, module, names)
        elif (
            isinstance(node, ast.Call)
            and _called_name(node.func) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")
        ):
            yield Import(node.lineno, node.args[0].value)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names


def check_layers(root: Path) -> list[Violation]:
    """Every import in every package of ``root`` that the layer table forbids."""
    violations: list[Violation] = []
    for package, allowed in LAYERS.items():
        for path in source_files(root, package):
            where = _relative(root, path)
            for imp in imports_of(root, path):
                top = imp.top
                if not top:
                    violations.append(Violation(
                        where, imp.line,
                        f"forbidden import of {imp.module} (a relative import past the "
                        f"top-level package {package}/)"))
                    continue
                if top == package or _is_stdlib(top) or top in allowed:
                    continue
                if top in THIRD_PARTY[package]:
                    continue
                if top in LAYERS:
                    rule = f"{package}/ may import only {sorted(allowed) or 'no package'}"
                    violations.append(Violation(
                        where, imp.line, f"forbidden import of {imp.module} ({rule})"))
                else:
                    violations.append(Violation(
                        where, imp.line,
                        f"forbidden import of {imp.module} ({top!r} is not a package, the "
                        f"standard library, or a third-party package allowed in {package}/: "
                        f"{sorted(THIRD_PARTY[package])})"))
    return sorted(violations)


def _random_aliases(tree: ast.Module) -> set[str]:
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "random":
                    aliases.add(alias.asname or "random")
    return aliases


def _enclosing_functions(tree: ast.Module) -> dict[ast.AST, str]:
    owner: dict[ast.AST, str] = {}

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            owner[child] = name
            visit(child, name)

    visit(tree, "<module>")
    return owner


def check_purity(root: Path) -> list[Violation]:
    """Every use of wall clock, threads, I/O, global random or hash() in the pure cores."""
    violations: list[Violation] = []
    for package in PURE_CORES:
        for path in source_files(root, package):
            where = _relative(root, path)
            tree = _parse(path)
            exempt = IMPURE_ALLOWED.get(where, frozenset())
            for imp in imports_of(root, path, tree):
                if imp.top in IMPURE_MODULES and imp.top not in exempt:
                    violations.append(Violation(
                        where, imp.line,
                        f"forbidden import of {imp.module} in a pure core "
                        f"(time, randomness and I/O are handed in by sim/)"))
                if imp.module == "random" and imp.names:
                    for name in imp.names:
                        if name not in RANDOM_ALLOWED:
                            violations.append(Violation(
                                where, imp.line,
                                f"forbidden import of random.{name} in a pure core "
                                f"(only the handed-in random.Random)"))
            violations.extend(_random_uses(where, tree))
            violations.extend(_hash_uses(where, tree))
            violations.extend(_impure_builtins(where, tree, exempt))
    return sorted(violations)


def _random_uses(where: str, tree: ast.Module) -> Iterator[Violation]:
    aliases = _random_aliases(tree)
    if not aliases:
        return
    allowed_names: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            if node.attr in RANDOM_ALLOWED:
                allowed_names.add(id(node.value))
            else:
                yield Violation(
                    where, node.lineno,
                    f"forbidden use of {node.value.id}.{node.attr} in a pure core "
                    f"(only the handed-in random.Random)")
                allowed_names.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases and id(node) not in allowed_names:
            yield Violation(
                where, node.lineno,
                f"forbidden use of the random module itself ({node.id}) in a pure core "
                f"(only the handed-in random.Random)")


def _impure_builtins(where: str, tree: ast.Module, exempt: frozenset[str]) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id in IMPURE_BUILTINS - exempt
            and isinstance(node.ctx, ast.Load)
        ):
            yield Violation(
                where, node.lineno,
                f"forbidden use of {node.id}() in a pure core (no file or terminal I/O)")


def _hash_uses(where: str, tree: ast.Module) -> Iterator[Violation]:
    owner = _enclosing_functions(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id == "hash"
            and isinstance(node.ctx, ast.Load)
            and (where, owner.get(node, "<module>")) not in HASH_ALLOWED
        ):
            yield Violation(
                where, node.lineno,
                "forbidden use of hash() in a pure core (salted per process: "
                "results and iteration order would depend on PYTHONHASHSEED)")


def source_lines(root: Path) -> dict[str, int]:
    """Lines of non-test Python source per package."""
    return {
        package: sum(len(path.read_text(encoding="utf-8").splitlines())
                     for path in source_files(root, package)
                     if not path.name.startswith("test_"))
        for package in LAYERS
    }


def _report(violations: list[Violation]) -> str:
    return "\n".join(str(v) for v in violations)


# ---------------------------------------------------------------------------
# The tree itself


def test_the_layer_table_holds() -> None:
    violations = check_layers(REPO)
    assert not violations, "\n" + _report(violations)


def test_the_pure_cores_are_pure() -> None:
    violations = check_purity(REPO)
    assert not violations, "\n" + _report(violations)


def test_the_table_names_every_package() -> None:
    on_disk = {
        path.parent.name for path in REPO.glob("*/__init__.py") if path.parent.name != "tests"
    }
    assert on_disk == set(LAYERS)
    assert set(THIRD_PARTY) == set(LAYERS)
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(config["tool"]["mypy"]["packages"]) == set(LAYERS)


def test_the_table_only_points_down() -> None:
    order = list(LAYERS)
    for package, allowed in LAYERS.items():
        assert all(order.index(other) < order.index(package) for other in allowed), package


def test_the_architecture_doc_lists_the_same_layers_in_the_same_order() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in text.splitlines()
            if line.startswith("| `") and line.split("|")[1].strip().endswith("/`")]
    assert rows == [f"`{package}/`" for package in LAYERS]


def test_no_package_holds_more_than_a_quarter_of_the_source() -> None:
    lines = source_lines(REPO)
    total = sum(lines.values())
    largest = max(lines, key=lambda package: lines[package])
    assert lines[largest] * 4 <= total, f"{largest}/ holds {lines[largest]} of {total} lines"


# ---------------------------------------------------------------------------
# The checkers can fail: plant violations in a scratch copy


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    for package in LAYERS:
        shutil.copytree(REPO / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _plant(root: Path, relative: str, text: str) -> None:
    (root / relative).write_text(text, encoding="utf-8")


def test_a_clean_copy_passes(scratch: Path) -> None:
    assert check_layers(scratch) == []
    assert check_purity(scratch) == []


def test_planted_upward_imports_are_reported(scratch: Path) -> None:
    _plant(scratch, "broker/planted.py",
           '"""Planted."""\n\nfrom controller import QuorumController\n')
    _plant(scratch, "raft/planted.py",
           '"""Planted."""\n\n\ndef f() -> None:\n    """Planted."""\n    import sim.world\n')
    _plant(scratch, "metadata/planted.py",
           '"""Planted."""\n\nfrom typing import TYPE_CHECKING\n\n'
           "if TYPE_CHECKING:\n    from broker import loader\n")
    _plant(scratch, "bench/planted.py", '"""Planted."""\n\nimport kraftsim.cli\n')
    _plant(scratch, "controller/planted.py", '"""Planted."""\n\nimport pandas\n')
    found = {(v.path, v.line, v.message.split(" (")[0]) for v in check_layers(scratch)}
    assert found == {
        ("broker/planted.py", 3, "forbidden import of controller"),
        ("raft/planted.py", 6, "forbidden import of sim.world"),
        ("metadata/planted.py", 6, "forbidden import of broker"),
        ("bench/planted.py", 3, "forbidden import of kraftsim.cli"),
        ("controller/planted.py", 3, "forbidden import of pandas"),
    }


def test_relative_imports_are_resolved(scratch: Path) -> None:
    _plant(scratch, "controller/operations/planted.py",
           '"""Planted."""\n\nfrom ...sim import world\nfrom .. import errors\n'
           "from .base import Operation\n")
    assert [str(v).split(" (")[0] for v in check_layers(scratch)] == [
        "controller/operations/planted.py:3: forbidden import of ...sim"
    ]
    imports = imports_of(scratch, scratch / "controller/operations/planted.py")
    assert [imp.module for imp in imports] == ["...sim", "controller", "controller.operations.base"]


def test_planted_impurities_are_reported(scratch: Path) -> None:
    _plant(scratch, "raft/planted.py",
           '"""Planted."""\n\nimport time\n\nTEXT = open("x").read()\n')
    _plant(scratch, "controller/planted.py",
           '"""Planted."""\n\nimport random\n\nX = random.random()\nR = random.Random(1)\n')
    _plant(scratch, "broker/planted.py",
           '"""Planted."""\n\nfrom random import Random, choice\n')
    _plant(scratch, "metadata/planted.py",
           '"""Planted."""\n\n\ndef order(keys: list[str]) -> list[str]:\n'
           '    """Planted."""\n    return sorted(keys, key=hash)\n\n\n'
           'def digest(key: str) -> int:\n    """Planted."""\n    return hash(key)\n')
    _plant(scratch, "kafka_format/planted.py", '"""Planted."""\n\nfrom pathlib import Path\n')
    found = {(v.path, v.line, v.message.split(" (")[0]) for v in check_purity(scratch)}
    assert found == {
        ("raft/planted.py", 3, "forbidden import of time in a pure core"),
        ("raft/planted.py", 5, "forbidden use of open() in a pure core"),
        ("controller/planted.py", 5, "forbidden use of random.random in a pure core"),
        ("broker/planted.py", 3, "forbidden import of random.choice in a pure core"),
        ("metadata/planted.py", 6, "forbidden use of hash() in a pure core"),
        ("metadata/planted.py", 11, "forbidden use of hash() in a pure core"),
        ("kafka_format/planted.py", 3, "forbidden import of pathlib in a pure core"),
    }


def test_a_violation_names_file_line_and_import() -> None:
    violation = Violation("broker/planted.py", 3, "forbidden import of controller")
    assert str(violation) == "broker/planted.py:3: forbidden import of controller"


def test_only_sim_testing_uses_the_test_libraries() -> None:
    """hypothesis and pytest are the optional ``testing`` extra: sim/testing/ alone uses them."""
    found = [f"{_relative(REPO, path)}:{imp.line}: {imp.module}"
             for path in source_files(REPO, "sim")
             if "testing" not in path.relative_to(REPO / "sim").parts
             for imp in imports_of(REPO, path) if imp.top in {"hypothesis", "pytest"}]
    assert not found, "\n".join(found)
