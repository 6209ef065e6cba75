"""The session as users meet it: exit codes, errors, JSON output, man pages, completion."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

from controller import ControllerConfig
from kraftsim.cli import main
from raft import RaftConfig
from shell.commands import COMMANDS
from shell.completion import candidates
from shell.lab import Lab
from sim.cluster import ClusterConfig
from tests.shell.shell_recorder import Recorder

Shell = Callable[..., Recorder]
SMALL = "cluster controllers=1 brokers=2 seed=1"


def test_exit_codes_ok_failed(shell: Shell) -> None:
    rec = shell()
    rec.run(SMALL, "create-topic t partitions=2", "run-until idle", "ls /image/topics/byName")
    assert rec.session.exit_code == 0
    assert rec.run("ls /nope") == ["ERR ls: /nope: no such file or directory"]
    assert rec.session.exit_code == 1
    assert rec.run("ls /image/topics/byName") == ["t"]  # the shell goes on after an error
    assert rec.session.exit_code == 1  # ... and remembers that something failed


def test_an_invariant_violation_exits_2(shell: Shell) -> None:
    rec = shell()
    config = ClusterConfig(seed=3, controllers=1, brokers=1,
                           controller=ControllerConfig(max_records_per_batch=10),
                           raft=RaftConfig(fetch_max_records=20),
                           mutations=frozenset({"publish-every-commit"}))
    lab = Lab(config)
    lab.cluster.start()
    rec.session.lab = lab
    out = rec.run("create-topic big partitions=100", "run-until idle")
    assert any(line.startswith("ERR INVARIANT VIOLATED") and "TxnAtomicVisibility" in line
               for line in out)
    assert rec.session.exit_code == 2
    assert rec.run("invariants")[-1].startswith("ERR invariants: TxnAtomicVisibility violated")
    assert rec.run("tick 10")[-1].startswith("ERR tick: the simulation stopped")


def test_an_unexpected_failure_is_one_line_not_a_traceback(shell: Shell,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    rec = shell()

    def broken(_session: object, _args: list[str]) -> None:
        raise KeyError("boom")

    monkeypatch.setitem(COMMANDS, "pwd", dataclasses.replace(COMMANDS["pwd"], run=broken))
    assert rec.run("pwd") == ["ERR pwd: internal error: KeyError: 'boom'"]


def test_every_command_has_a_man_page(shell: Shell) -> None:
    rec = shell()
    for name, command in COMMANDS.items():
        page = rec.run(f"man {name}")
        assert page[:2] == ["NAME", f"    {name} - {command.summary}"]
        assert "SYNOPSIS" in page and "DESCRIPTION" in page
        assert len(command.man) > 20


def test_json_output_of_cat_ls_find(shell: Shell) -> None:
    rec = shell("json")
    rec.run(SMALL, "create-topic j partitions=2 replication-factor=2", "run-until idle")
    partition = json.loads(rec.run("cat /image/topics/byName/j/1")[0])
    value = partition["/image/topics/byName/j/1"]
    assert value["replicas"] == value["isr"] and value["leaderEpoch"] == 0
    assert {"leaderRecoveryState", "partitionEpoch", "removingReplicas"} <= value.keys()
    listing = json.loads(rec.run("ls /image/topics/byName/j /image/provenance")[0])
    assert listing == {"/image/topics/byName/j": ["0", "1", "id", "name"],
                       "/image/provenance": None}
    found = json.loads(rec.run("find /image/features")[0])
    assert found == ["/image/features", "/image/features/finalized_group.version",
                     "/image/features/metadataVersion", "/image/features/zkMigrationState"]
    broker = json.loads(rec.run("cat /image/cluster/brokers/1")[0])["/image/cluster/brokers/1"]
    assert broker["id"] == 1 and broker["fenced"] is False


def test_completion_of_commands_paths_nodes_and_options(shell: Shell) -> None:
    rec = shell()
    session = rec.session
    assert candidates(session, "cre") == ["create-acl", "create-topic"]
    assert candidates(session, "create-t") == ["create-topic"]
    assert candidates(session, "man run-") == ["run-until"]
    rec.run(SMALL, "create-topic orders", "create-topic other", "run-until idle")
    assert candidates(session, "ls /image/fea") == ["/image/features/"]
    assert candidates(session, "cat /image/topics/byName/o") == [
        "/image/topics/byName/orders/", "/image/topics/byName/other/"]
    assert candidates(session, "cat /image/provenance/") == []
    rec.run("cd /image/topics")
    assert candidates(session, "ls byN") == ["byName/"]
    assert candidates(session, "view ") == ["leader", "0", "1", "3000"]
    assert candidates(session, "partition 0,30") == ["0,3000"]
    assert candidates(session, "run-until o") == ["open-txn"]
    assert candidates(session, "create-topic x part") == ["partitions="]


def test_scripts_from_a_file_and_stdin_stop_at_exit(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "lab.txt"
    script.write_text("# a comment\npwd\nexit\nls /nope\n", encoding="utf-8")
    assert main(["shell", "-f", str(script)]) == 0
    assert capsys.readouterr().out == "/\n"
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("cd /local\npwd\nlss\n"))
    assert main(["shell"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "/local\n"
    assert captured.err == "lss: unknown command (did you mean ls?); 'help' lists the commands\n"
    assert main(["shell", "-f", str(tmp_path / "missing.txt")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_run_check_reports_differences_and_rewrite_fixes_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.txt"
    path.write_text("# comment kept\npwd\n----\n/wrong\n\ncd /local\n----\n", encoding="utf-8")
    assert main(["run", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "t.txt:2: output of 'pwd' differs:" in out and "+/" in out and "-/wrong" in out
    assert main(["run", "--rewrite", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == "# comment kept\npwd\n----\n/\n\ncd /local\n----\n"
    capsys.readouterr()
    assert main(["run", "--check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 2 commands, every output as expected\n"
    assert main(["run", str(path)]) == 0
    assert capsys.readouterr().out == "pwd\n----\n/\n\ncd /local\n----\n"  # a transcript


def test_run_check_names_the_commands_after_exit(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A transcript whose commands after ``exit`` never ran does not pass --check."""
    path = tmp_path / "t.txt"
    path.write_text("pwd\n----\n/\n\nexit\n----\n\npwd\n----\n/\n", encoding="utf-8")
    assert main(["run", "--check", str(path)]) == 1
    assert capsys.readouterr().out == f"{path}:8: pwd: not run (after exit)\n"


def test_retries_resubmit_after_not_controller(shell: Shell) -> None:
    rec = shell()
    rec.run("cluster controllers=3 brokers=1 seed=2", "crash leader")
    out = rec.run("create-topic later retries=2")
    assert out == ["op 1 (create-topic later): NOT_CONTROLLER: No controller appears to "
                   "be active; will retry (2 left)"]
    out = rec.run("run-until idle")
    assert any("retry 1: submitted to controller" in line for line in out)
    assert any(line.startswith("op 1 (create-topic later): committed at") for line in out)
    assert rec.session.exit_code == 0


def test_run_until_times_out_instead_of_hanging(shell: Shell) -> None:
    rec = shell()
    rec.run(SMALL, "partition 0", "create-topic x")
    out = rec.run("run-until open-txn timeout=500")
    assert out[0] == (f"ERR run-until: timed out after 500 ms (now {rec.session.lab.now} ms): no "
                      f"transaction is open in the committed log")


def test_blank_lines_and_comments_succeed_and_are_not_history(shell: Shell) -> None:
    rec = shell()
    session = rec.session
    assert session.execute("") and session.execute("   ") and session.execute("# a note")
    assert session.history == [] and session.exit_code == 0
    assert not session.execute("lss") and session.execute("  # after a failure")
    assert session.history == ["lss"] and session.exit_code == 1


def test_json_format_gathers_a_commands_text_lines_into_one_object(shell: Shell) -> None:
    rec = shell("json")
    assert [json.loads(line) for line in rec.run("cd /local", "pwd")] == [
        {"command": "pwd", "output": ["/local"]}]
    assert rec.run("lss") == ["ERR lss: unknown command (did you mean ls?); 'help' lists "
                              "the commands"]


def test_the_version_is_unknown_when_kraftsim_is_not_installed(
        shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert shell().run("cat /local/version") == ["kraftsim unknown"]


def test_status_shows_the_controllers_registrations_with_every_broker_down() -> None:
    """No broker runs to publish an image: the brokers line still comes from the active
    controller's committed registrations."""
    shell = Recorder()
    lines = shell.run("cluster controllers=1 brokers=2 seed=4 heartbeats=on", "run-until idle",
                      "crash 0", "crash 1", "tick 20000", "status")
    assert "brokers (committed registrations): 0 fenced (epoch 7); 1 fenced (epoch 8)" in lines





def test_the_prompts_completer_shows_last_components_and_survives_a_failure(
        shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interactive prompt's completions: full paths inserted over the typed word, their
    last component shown; a completion that fails offers nothing instead of breaking the
    prompt."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from shell import completion
    rec = shell()
    rec.run(SMALL, "create-topic orders", "run-until idle")
    completer = completion.ShellCompleter(rec.session)
    found = list(completer.get_completions(Document("ls /image/topics/byName/or"),
                                           CompleteEvent()))
    assert [(c.text, c.start_position, c.display_text) for c in found] == [
        ("/image/topics/byName/orders/", -len("/image/topics/byName/or"), "orders/")]

    def broken(session: object, before: str) -> list[str]:
        raise RuntimeError("a bug in completion")
    monkeypatch.setattr(completion, "candidates", broken)
    assert list(completer.get_completions(Document("ls /im"), CompleteEvent())) == []


def test_status_in_json_says_which_controller_is_active() -> None:
    shell = Recorder(output_format="json")
    status = json.loads(shell.run("cluster controllers=3 brokers=1 seed=4", "status")[-1])
    assert status["activeController"] == 3000
    assert {n["nodeId"]: n.get("active") for n in status["nodes"]} == {
        0: None, 3000: True, 3001: False, 3002: False}


def test_cluster_offers_metadata_version_in_its_page_completion_and_errors(shell: Shell
                                                                          ) -> None:
    """``man cluster`` documents metadata-version=V; it completes; a bad level is one error
    line in the controller's words; a cluster below 3.6-IV1 says its mode is atomic and its
    ``seed`` line names the level, so that it replays."""
    rec = shell()
    page = rec.run("man cluster")
    assert any("[metadata-version=V]" in line for line in page)
    assert any(line.strip().startswith("metadata-version=V  the metadata.version the cluster "
                                       "is bootstrapped at") for line in page)
    assert "metadata-version=" in candidates(rec.session, "cluster metadata-v")
    assert rec.run("cluster metadata-version=3.2-IV0") == [
        "ERR cluster: metadata-version must be a metadata.version in 3.3-IV0..4.5-IV0: "
        "Bootstrap metadata.version before 3.3-IV0 are not supported, got 3.2-IV0"]
    out = rec.run(f"{SMALL} metadata-version=13", "seed")
    assert out[0].endswith(", mode transactional, metadata.version 3.6-IV1")
    assert out[-1].endswith(" metadata-version=3.6-IV1")
    out = rec.run(f"{SMALL} metadata-version=3.5-IV2")
    assert out[0].endswith(", mode atomic, metadata.version 3.5-IV2")
    assert rec.run(SMALL)[0].endswith(", mode transactional")  # the default: not named


def test_seed_line_replays_a_cluster_with_broker_lifecycles(shell: Shell) -> None:
    """``seed`` after ``cluster ... heartbeats=on`` names heartbeats=on: the line it prints
    starts a cluster whose brokers register and heartbeat again, the same run."""
    rec = shell()
    first = rec.run(f"{SMALL} heartbeats=on")
    line = rec.run("seed")[-1].strip()
    assert line.endswith(" heartbeats=on")
    assert rec.run(line) == first
    assert not rec.run(SMALL, "seed")[-1].endswith("heartbeats=on")  # off: not named
