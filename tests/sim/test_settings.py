"""The cluster settings table and its one parser."""

from __future__ import annotations

import pytest

from controller import ControllerConfig, WriteMode
from controller.operations import CreateTopics, NewTopic
from metadata.versions import LEVELS
from sim.brokers import BrokerSettings
from sim.cluster import ClusterConfig
from sim.demo import demo_config
from sim.settings import (
    ALIASES,
    BY_NAME,
    MAX_FETCH_LAG_MS,
    SETTINGS,
    SettingError,
    build_config,
    parse_int,
    parse_setting_words,
    parse_settings,
    settings_help,
)


def test_every_setting_has_a_name_type_default_bounds_and_help() -> None:
    for s in SETTINGS:
        assert s.help and s.name == s.name.lower()
        if s.kind is int:
            assert s.minimum is not None and s.maximum is not None
            assert s.minimum <= int(s.default) <= s.maximum
    assert len(settings_help()) == len(SETTINGS)


def test_each_setting_reaches_the_config() -> None:
    config = parse_settings(["controllers=5", "brokers=0", "seed=-4", "max-records-per-batch=7",
                             "mode=non-atomic", "fetch-max-records=9", "broker-fetch-lag=30",
                             "linger-ms=3", "mutations=forget-failover-abort"])
    assert (config.controllers, config.brokers, config.seed) == (5, 0, -4)
    assert config.controller.max_records_per_batch == 7
    assert config.controller.write_mode is WriteMode.NON_ATOMIC
    assert config.raft.fetch_max_records == 9 and config.raft.append_linger_ms == 3
    assert config.broker_fetch_lag_ms == 30
    assert config.mutations == frozenset({"forget-failover-abort"})
    config.validate()


def test_no_words_is_the_default_config_and_mode_is_left_to_the_version() -> None:
    scripted = ClusterConfig(brokers_settings=BrokerSettings(lifecycle=False))
    assert parse_settings([]) == scripted
    assert parse_settings(["heartbeats=on"]) == ClusterConfig()
    assert parse_settings([]).controller.write_mode is None
    assert parse_settings(["mutations=none"]).mutations == frozenset()


@pytest.mark.parametrize(("alias", "canonical"), sorted(ALIASES.items()))
def test_aliases_are_the_same_setting(alias: str, canonical: str) -> None:
    value = "12" if BY_NAME[canonical].kind is int else "none"
    assert parse_setting_words([f"{alias}={value}"]) == \
        parse_setting_words([f"{canonical}={value}"])
    with pytest.raises(SettingError, match="given twice"):
        parse_setting_words([f"{alias}={value}", f"{canonical}={value}"])


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.kind is int], ids=lambda s: s.name)
def test_bounds_are_enforced_with_one_line(s: object) -> None:
    from sim.settings import Setting

    assert isinstance(s, Setting) and s.minimum is not None and s.maximum is not None
    assert s.parse(str(s.maximum)) == s.maximum
    with pytest.raises(SettingError) as high:
        s.parse(str(s.maximum + 1))
    assert high.value.line().startswith(f"{s.name} must be at most {s.maximum}, got ")
    with pytest.raises(SettingError) as low:
        s.parse(str(s.minimum - 1))
    assert low.value.line().startswith(f"{s.name} must be at least {s.minimum}, got ")
    with pytest.raises(SettingError) as huge:
        s.parse("9" * 5000)
    assert "\n" not in huge.value.line() and len(huge.value.line()) < 150
    assert f"at most {s.maximum}" in huge.value.line()


def test_bad_words() -> None:
    with pytest.raises(SettingError, match=r"must be one of transactional"):
        parse_settings(["mode=transactionl"])
    with pytest.raises(SettingError, match="did you mean brokers="):
        parse_settings(["brokes=3"])
    with pytest.raises(SettingError, match="unknown mutation"):
        parse_settings(["mutations=nope"])
    assert parse_settings(["seed=-5"]).seed == -5
    assert parse_settings([f"seed={2**70}"]).seed == 2**70
    with pytest.raises(SettingError, match="must be an integer, got 'x'"):
        parse_settings(["seed=x"])
    with pytest.raises(SettingError, match="is no setting here"):
        parse_settings(["linger-ms=3"], allowed=("controllers",))
    with pytest.raises(SettingError, match="must be at least 1, got a number"):
        parse_int("n", "-" + "9" * 100, 1, 5)


def test_fetch_lag_bound_is_below_the_request_timeout() -> None:
    config = ClusterConfig()
    assert MAX_FETCH_LAG_MS + 2 * config.network.latency_ms < config.raft.request_timeout_ms
    assert MAX_FETCH_LAG_MS + 1 + 2 * config.network.latency_ms >= \
        config.raft.request_timeout_ms


def test_demo_cluster_is_spelled_in_settings() -> None:
    config = demo_config(7, WriteMode.TRANSACTIONAL)
    assert (config.controllers, config.brokers, config.seed) == (3, 3, 7)
    assert config.controller.max_records_per_batch == 100
    assert config.raft.fetch_max_records == 250
    assert demo_config().controller.write_mode is None


def test_errors_show_long_values_shortened_and_never_misstate_a_bound() -> None:
    with pytest.raises(SettingError) as word:
        parse_int("n", "x" * 50, 1, 5)
    assert word.value.line() == "n must be an integer, got 'xxxxxxxxxxxx'... (50 characters)"
    with pytest.raises(SettingError) as negative:  # no lower bound: not "at most 5"
        parse_int("n", "-" + "9" * 100, None, 5)
    assert "at most" not in negative.value.line()
    with pytest.raises(SettingError, match="must be at most 5, got a number of 100 characters"):
        parse_int("n", "9" * 100, None, 5)


def test_help_lines_name_each_setting_with_its_bounds() -> None:
    [brokers] = settings_help(["brokers"])
    setting_of = BY_NAME["brokers"]
    assert brokers.startswith(f"brokers={setting_of.minimum}-{setting_of.maximum}")
    assert brokers.endswith(f"(default {setting_of.default})")
    assert len(settings_help()) == len(SETTINGS)
    mode = BY_NAME["mode"]
    assert mode.bounds() == "|".join(mode.choices)
    with pytest.raises(SettingError) as nothing_close:
        parse_settings(["zzzzzz=1"])
    assert "settings: " + ", ".join(s.name + "=" for s in SETTINGS) in \
        nothing_close.value.line()


def test_a_config_built_from_unknown_names_names_the_first_in_order() -> None:
    with pytest.raises(SettingError) as unknown:
        build_config({"zeta": 1, "alpha": 2, "brokers": 3})
    assert unknown.value.line().startswith("alpha is no cluster setting")


def test_the_bounds_and_defaults_are_those_documented() -> None:
    """The module's table: each setting's bounds and default, as a user reads them in help."""
    documented = {
        "controllers": (1, 9, 3), "brokers": (0, 50, 3), "seed": (-(10**40 - 1), 10**40 - 1, 0),
        "max-records-per-batch": (3, 1_000_000, 10_000), "fetch-max-records": (1, 1_000_000, 1000),
        "broker-fetch-lag": (0, 1997, 0), "linger-ms": (0, 10_000, 25),
    }
    assert {s.name: (s.minimum, s.maximum, s.default) for s in SETTINGS
            if s.kind is int} == documented
    assert parse_settings(["fetch-max-records=1", "max-records-per-batch=3", "brokers=0",
                           "controllers=1", "linger-ms=0", "broker-fetch-lag=1997"]
                          ).raft.fetch_max_records == 1
    with pytest.raises(SettingError) as zero:
        parse_settings(["fetch-records=0"])
    assert zero.value.line() == "fetch-records must be at least 1, got 0"
    assert [(s.name, s.default, s.choices) for s in SETTINGS if s.kind is str] == [
        ("mode", "transactional", ("transactional", "atomic", "non-atomic")),
        ("mutations", "none", ()), ("heartbeats", "off", ("on", "off")),
        ("metadata-version", "4.0-IV0", ())]


def test_metadata_version_is_the_bootstrap_level_by_name_or_number() -> None:
    """A release name or its feature level; both are one value, kept as the name. Not
    given, the cluster bootstraps at ControllerConfig's default (4.0-IV0)."""
    assert parse_settings([]).controller.bootstrap_metadata_version == \
        ControllerConfig().bootstrap_metadata_version == LEVELS["4.0-IV0"]
    assert parse_settings(["metadata-version=4.1-IV0"]).controller == \
        ControllerConfig(bootstrap_metadata_version=LEVELS["4.1-IV0"])
    assert parse_setting_words(["metadata-version=26"]) == \
        parse_setting_words(["metadata-version=4.1-IV0"]) == {"metadata-version": "4.1-IV0"}
    assert parse_settings(["metadata-version=3.3-IV0"]).controller.bootstrap_metadata_version \
        == 4
    assert parse_settings(["metadata-version=4.0-IV0"]) == parse_settings([])
    assert settings_help(["metadata-version"]) == [
        "metadata-version=3.3-IV0..4.5-IV0  " + BY_NAME["metadata-version"].help
        + " (default 4.0-IV0)"]


@pytest.mark.parametrize(("value", "problem"), [
    ("3.2-IV0", "Bootstrap metadata.version before 3.3-IV0 are not supported, got 3.2-IV0"),
    ("3", "Bootstrap metadata.version before 3.3-IV0 are not supported, got 3.2-IV0"),
    ("4.9-IV9", "unknown metadata.version '4.9-IV9'; use a level 1-34 or a release name such "
                "as 3.6-IV1"),
    ("35", "metadata.version level 35 is outside 1-34"),
])
def test_a_metadata_version_no_cluster_can_bootstrap_at_is_refused_in_the_controllers_words(
        value: str, problem: str) -> None:
    with pytest.raises(SettingError) as error:
        parse_settings([f"metadata-version={value}"])
    assert error.value.line() == \
        f"metadata-version must be a metadata.version in 3.3-IV0..4.5-IV0: {problem}"


def test_a_cluster_at_4_1_starts_with_eligible_leader_replicas_and_below_3_6_atomic() -> None:
    """What the level changes, seen by a user: ELR on from the start at 4.1-IV0 (Kafka's
    formatter default), off at the default 4.0-IV0; below 3.6-IV1 the write mode left to the
    version is atomic."""
    from controller.operations.elr import elr_enabled
    from sim.cluster import KRaftCluster
    from sim.startup import start_cluster

    for value, elr in (("4.1-IV0", True), ("4.0-IV0", False)):
        cluster = KRaftCluster(parse_settings([f"metadata-version={value}", "brokers=1"]))
        assert start_cluster(cluster)
        active = cluster.active_controller()
        assert active is not None and elr_enabled(active.committed_image()) is elr
        assert active.metadata_version == LEVELS[value]
    low = KRaftCluster(parse_settings(["metadata-version=3.5-IV2", "brokers=1",
                                       "max-records-per-batch=3"]))
    assert start_cluster(low)
    active = low.active_controller()
    assert active is not None and active.metadata_version == LEVELS["3.5-IV2"]
    handle = low.submit(CreateTopics((NewTopic("t", 5, 1),)))
    assert handle.mode == "atomic" and handle.error is not None
    assert handle.error.code == "POLICY_VIOLATION"  # 6 records do not fit one batch of 3
