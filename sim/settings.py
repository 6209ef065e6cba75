"""The settings of a simulated cluster: one table, one parser from ``key=value`` words.

The shell's ``cluster`` command, the experiments' cluster parameters
(``--param batch-records=10``) and the demo all describe a cluster with the
words of :data:`SETTINGS`; :func:`parse_settings` turns them into a
:class:`~sim.cluster.ClusterConfig`. Each setting has one canonical name, a
type, a default, bounds and a help line; older spellings are aliases
(:data:`ALIASES`), so ``batch-records=10`` and ``max-records-per-batch=10``
are the same word.

==========================  ===========================  =====================
setting (aliases)           bounds                       default
==========================  ===========================  =====================
``controllers``             1 - 9                        3
``brokers``                 0 - 50                       3
``seed``                    an integer of <= 40 digits   0
``max-records-per-batch``   3 - 1,000,000                10,000
(``batch-records``)
``mode``                    transactional, atomic,       by metadata.version
                            non-atomic                   (transactional)
``fetch-max-records``       1 - 1,000,000                1,000
(``fetch-records``)
``broker-fetch-lag`` (ms)   0 - 1,997                    0
(``broker-fetch-lag-ms``)
``linger-ms``               0 - 10,000                   25
(``append-linger-ms``)
``mutations``               names joined by ``+``        none
``heartbeats``              on, off                      off
``metadata-version``        3.3-IV0..4.5-IV0 (a          4.0-IV0
                            release name or its level)
==========================  ===========================  =====================

The broker fetch lag delays every response a broker gets from a controller.
A fetch response that arrives ``request_timeout_ms`` (2000 ms, raft/config.py)
after its request is too late: the broker has given up and fetched again. A
round trip is the lag plus two link latencies (1 ms each at least), so a lag of
1998 ms or more makes every fetch time out and the broker never catches up;
:meth:`ClusterConfig.validate` checks the bound against the actual latencies.

``heartbeats=on`` gives brokers their own lifecycle: they register, heartbeat
and are fenced by the controller when their session expires
(:mod:`sim.brokers`). The words default to ``off`` (brokers registered by the
cluster at start and never fenced), so runs stay comparable with those made
before broker lifecycles; a :class:`~sim.cluster.ClusterConfig` built in code
has them on.

``metadata-version`` is the metadata.version the first controller leader of
the empty log writes (``ControllerConfig.bootstrap_metadata_version``), given
as Kafka's release name (``4.1-IV0``) or as its feature level (``26``); the
value is kept as the release name, so both spellings are one value. The
controller's own check refuses an unknown level and one below 3.3-IV0 (the
first with a FeatureLevelRecord), with its words. A cluster bootstrapped at
4.1-IV0 or later starts with eligible leader replicas on, as Kafka's formatter
does (with group.version 1 from 4.0-IV0 and transaction.version 2 from 4.0-IV2:
:func:`metadata.versions.default_feature_levels`); below 3.6-IV1 no
metadata transaction can be written, so ``mode`` is atomic unless given.

The shell's ``cluster`` offers the first seven settings, ``heartbeats`` and
``metadata-version``; the experiments take ``controllers``, ``brokers``,
``batch-records``, ``fetch-records``, ``linger-ms``, ``mode`` and
``mutations`` (broker-failover ``metadata-version`` too; an experiment may
narrow a bound, e.g. a failover needs three controllers) and keep writing
those names into their rows and replay commands; the demo is
:data:`sim.demo.DEMO_SETTINGS`.

Errors are :class:`SettingError` s: one line naming the setting, the bound it
breaks and the bad value. A number is checked against its bounds before it is
used, so that no size, however many digits it has, starts any work.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from controller import ControllerConfig, WriteMode
from metadata.versions import (
    LATEST_PRODUCTION,
    LEVELS,
    MINIMUM_BOOTSTRAP,
    parse_metadata_version,
    release_name,
)
from raft.config import ConfigError
from sim.bounds import MAX_DURATION_MS, MAX_OBSERVERS, MAX_SEED, MAX_VOTERS
from sim.cluster import ALL_MUTATIONS, ClusterConfig

MAX_FETCH_LAG_MS = 1997
"""Largest broker fetch lag with the default network and raft settings (see the module docs)."""

METADATA_VERSIONS = f"{release_name(MINIMUM_BOOTSTRAP)}..{release_name(max(LEVELS.values()))}"
"""The metadata.versions a cluster may be bootstrapped at, for help texts and errors."""

_INTEGER = re.compile(r"\s*[+-]?[0-9_]+\s*")
_LONGEST_INTEGER = 40  # characters: more than any bound here needs


class SettingError(ConfigError):
    """A bad ``key=value`` word: ``key`` as given, ``problem`` says what is wrong.

    ``kind`` is ``value`` (bad value), ``unknown`` (no such setting) or
    ``twice`` (given twice).
    """

    def __init__(self, key: str, problem: str, kind: str = "value") -> None:
        super().__init__(key, problem)
        self.key = key
        self.problem = problem
        self.kind = kind

    def line(self) -> str:
        """The error as one line: ``controllers must be at most 9, got 10``."""
        return f"{self.key} {self.problem}"


def shown(text: str) -> str:
    """A bad value as an error shows it: quoted, and shortened when it is very long."""
    if len(text) <= _LONGEST_INTEGER:
        return repr(text)
    return f"{text[:12]!r}... ({len(text)} characters)"


def parse_int(key: str, text: str, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """An integer within [minimum, maximum]; raises SettingError naming ``key``.

    The length of the text is checked first, so a number of thousands of digits
    is refused as out of bounds without being converted.
    """
    if len(text) > _LONGEST_INTEGER:
        if _INTEGER.fullmatch(text):
            negative = text.strip().startswith("-")
            if negative and minimum is not None:
                raise SettingError(key, f"must be at least {minimum}, got a number of "
                                        f"{len(text.strip())} characters")
            if not negative and maximum is not None:
                raise SettingError(key, f"must be at most {maximum}, got a number of "
                                        f"{len(text.strip())} characters")
        raise SettingError(key, f"must be an integer, got {shown(text)}")
    try:
        value = int(text)
    except ValueError:
        raise SettingError(key, f"must be an integer, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise SettingError(key, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise SettingError(key, f"must be at most {maximum}, got {value}")
    return value


@dataclass(frozen=True)
class Setting:
    """One cluster setting: canonical name, type, default, bounds, help."""

    name: str
    kind: type[int] | type[str]
    default: int | str
    help: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def bounds(self) -> str:
        """The documented bounds, for help texts."""
        if self.choices:
            return "|".join(self.choices)
        if self.name == "metadata-version":
            return METADATA_VERSIONS
        if self.kind is int:
            return f"{self.minimum}-{self.maximum}"
        return "text"

    def parse(self, text: str, key: str | None = None) -> int | str:
        """The value of ``text``; raises SettingError naming ``key`` (default: the name)."""
        key = key or self.name
        if self.kind is int:
            return parse_int(key, text, self.minimum, self.maximum)
        if self.choices and text not in self.choices:
            close = difflib.get_close_matches(text, self.choices, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise SettingError(key, f"must be one of {', '.join(self.choices)}, got "
                                    f"{shown(text)}{hint}")
        if self.name == "mutations":
            _check_mutations(key, text)
        if self.name == "metadata-version":
            return release_name(metadata_level(key, text))
        return text


MODES = tuple(m.value for m in WriteMode)
"""The write modes by name."""

SETTINGS: tuple[Setting, ...] = (
    Setting("controllers", int, 3, "controllers, node ids 3000.. (voters)", 1, MAX_VOTERS),
    Setting("brokers", int, 3, "brokers, node ids 0.. (observers)", 0, MAX_OBSERVERS),
    Setting("seed", int, 0, "the seed: the same seed and commands give the same run",
            -MAX_SEED, MAX_SEED),
    Setting("max-records-per-batch", int, 10_000,
            "records per raft batch, markers included", 3, 1_000_000,
            aliases=("batch-records",)),
    Setting("mode", str, "transactional",
            "how an operation larger than one batch is written: transactional (Begin ... "
            "End, KIP-868), atomic (refused), non-atomic (split with no markers)",
            choices=MODES),
    Setting("fetch-max-records", int, 1000, "records a fetch response carries at most",
            1, 1_000_000, aliases=("fetch-records",)),
    Setting("broker-fetch-lag", int, 0,
            "extra delay (ms) on every link into a broker (lagging brokers); at or above "
            "the raft request timeout minus two link latencies every fetch would time out",
            0, MAX_FETCH_LAG_MS, aliases=("broker-fetch-lag-ms",)),
    Setting("linger-ms", int, 25, "append linger of the controller leader: its appends "
                                  "are lost in a crash until flushed", 0, 10_000,
            aliases=("append-linger-ms",)),
    Setting("mutations", str, "none", "deliberate bugs to switch on, joined by '+' "
                                      "(test-only), or none"),
    Setting("heartbeats", str, "off", "brokers register, heartbeat and are fenced when their "
                                      "session expires (on), or are registered by the cluster "
                                      "at start and never fenced (off)", choices=("on", "off")),
    Setting("metadata-version", str, release_name(LATEST_PRODUCTION),
            "the metadata.version the cluster is bootstrapped at: a release name such as "
            "4.1-IV0 or its feature level, 3.3-IV0 at least; from 4.1-IV0 eligible leader "
            "replicas are on, below 3.6-IV1 no metadata transaction can be written"),
)
"""Every cluster setting, in the order help texts list them."""

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
"""Settings by canonical name."""
ALIASES: dict[str, str] = {alias: s.name for s in SETTINGS for alias in s.aliases}
"""Older spellings -> canonical names."""


def setting(key: str) -> Setting:
    """The setting ``key`` names (canonical or alias); raises SettingError if none."""
    found = BY_NAME.get(ALIASES.get(key, key))
    if found is None:
        close = difflib.get_close_matches(key, [*BY_NAME, *ALIASES], n=1)
        hint = f"did you mean {close[0]}=?" if close else \
            f"settings: {', '.join(s + '=' for s in BY_NAME)}"
        raise SettingError(key, f"is no cluster setting ({hint})", kind="unknown")
    return found


def mutation_names(text: str) -> frozenset[str]:
    """The mutation names of a ``mutations`` value (``a+b``; ``none`` or empty: none)."""
    return frozenset() if text in ("", "none") else frozenset(text.split("+"))


def _check_mutations(key: str, text: str) -> None:
    if text in ("", "none"):
        return
    unknown = sorted(set(text.split("+")) - ALL_MUTATIONS.keys())
    if unknown:
        raise SettingError(key, f"unknown mutation(s) {', '.join(unknown)}; known: "
                                f"{', '.join(sorted(ALL_MUTATIONS))}")


def metadata_level(key: str, text: str) -> int:
    """The feature level a ``metadata-version`` value names (``4.1-IV0`` or ``26``); raises
    SettingError naming ``key`` with the controller's own words for an unknown level or one
    it cannot bootstrap."""
    try:
        level = parse_metadata_version(text.strip())
        ControllerConfig(bootstrap_metadata_version=level).validate()
    except ConfigError as exc:
        raise SettingError(key, f"must be a metadata.version in {METADATA_VERSIONS}: "
                                f"{exc.message}") from None
    except ValueError as exc:
        raise SettingError(key, f"must be a metadata.version in {METADATA_VERSIONS}: "
                                f"{exc}") from None
    return level


def parse_setting_words(words: Iterable[str], allowed: Sequence[str] | None = None
                        ) -> dict[str, int | str]:
    """Canonical name -> value from ``key=value`` words; raises SettingError.

    ``allowed`` limits the canonical names a caller offers (all by default).
    """
    values: dict[str, int | str] = {}
    for word in words:
        key, eq, text = word.partition("=")
        if not eq:
            raise SettingError(word, "is not a key=value word", kind="unknown")
        found = setting(key)
        if allowed is not None and found.name not in allowed:
            raise SettingError(key, f"is no setting here (settings: "
                                    f"{', '.join(s + '=' for s in allowed)})", kind="unknown")
        if found.name in values:
            raise SettingError(key, "given twice", kind="twice")
        values[found.name] = found.parse(text, key)
    return values


def build_config(values: Mapping[str, Any], base: ClusterConfig | None = None
                 ) -> ClusterConfig:
    """A :class:`~sim.cluster.ClusterConfig` from canonical name -> value.

    Settings not given keep ``base``'s values (default: ``ClusterConfig()``);
    ``mode`` not given leaves the write mode to metadata.version.
    """
    config = base if base is not None else ClusterConfig()
    unknown = sorted(set(values) - BY_NAME.keys())
    if unknown:
        raise SettingError(unknown[0], "is no cluster setting", kind="unknown")
    top: dict[str, Any] = {}
    controller: dict[str, Any] = {}
    raft: dict[str, Any] = {}
    for name, value in values.items():
        if name in ("controllers", "brokers", "seed"):
            top[name] = int(value)
        elif name == "broker-fetch-lag":
            top["broker_fetch_lag_ms"] = int(value)
        elif name == "mutations":
            top["mutations"] = mutation_names(str(value))
        elif name == "max-records-per-batch":
            controller["max_records_per_batch"] = int(value)
        elif name == "mode":
            controller["write_mode"] = WriteMode(str(value))
        elif name == "fetch-max-records":
            raft["fetch_max_records"] = int(value)
        elif name == "linger-ms":
            raft["append_linger_ms"] = int(value)
        elif name == "metadata-version":
            controller["bootstrap_metadata_version"] = metadata_level(name, str(value))
        elif name == "heartbeats":
            top["brokers_settings"] = msgspec.structs.replace(
                config.brokers_settings, lifecycle=value == "on")
    if controller:
        top["controller"] = msgspec.structs.replace(config.controller, **controller)
    if raft:
        top["raft"] = msgspec.structs.replace(config.raft, **raft)
    result: ClusterConfig = msgspec.structs.replace(config, **top)
    return result


def parse_settings(words: Iterable[str], allowed: Sequence[str] | None = None
                   ) -> ClusterConfig:
    """The :class:`~sim.cluster.ClusterConfig` the ``key=value`` words describe.

    Settings not given take the table's defaults (``heartbeats`` too: off).
    Raises SettingError (one line: the setting, its bound, the bad value).
    """
    values = parse_setting_words(words, allowed)
    values.setdefault("heartbeats", BY_NAME["heartbeats"].default)
    return build_config(values)


def settings_help(names: Sequence[str] | None = None) -> list[str]:
    """One line per setting: ``name=BOUNDS  help (default D)``."""
    lines = []
    for s in SETTINGS:
        if names is not None and s.name not in names:
            continue
        alias = f" (also {', '.join(s.aliases)})" if s.aliases else ""
        lines.append(f"{s.name}={s.bounds()}{alias}  {s.help} (default {s.default})")
    return lines


__all__ = ["ALIASES", "BY_NAME", "MAX_DURATION_MS", "MAX_FETCH_LAG_MS", "METADATA_VERSIONS",
           "SETTINGS", "Setting", "SettingError", "build_config", "metadata_level",
           "mutation_names", "parse_int",
           "parse_setting_words", "parse_settings", "setting", "settings_help"]
