"""Command-line failures end in one clear line and exit 1, never in a traceback.

A trace path that cannot be written, a reader that goes away (``| head``), a
``--save`` that Kafka's format cannot hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.operations import RegisterBroker
from kraftsim.cli import main
from kraftsim.save_option import save_run
from shell.lab import Lab
from sim.cluster import ClusterConfig

REPO = Path(__file__).resolve().parents[2]


def kafka_data() -> Path:
    configured = os.environ.get("KRAFTSIM_KAFKA_DATA")
    return Path(configured) if configured else REPO.parent / "shared" / "kafka-data"


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("where", ["missing/folder/trace.jsonl", "."])
def test_raft_sim_trace_that_cannot_be_written(where: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / where
    code = main(["raft-sim", "--duration", "100", "--trace", str(target)])
    line = one_error_line(capsys.readouterr().err)
    assert code == 1
    reason = "No such file or directory" if where != "." else "Is a directory"
    assert line == f"kraftsim: error: cannot write trace {target}: {reason}"


def test_experiment_replay_trace_into_a_missing_folder(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    target = tmp_path / "nowhere" / "t.jsonl"
    code = main(["experiment", "failover", "--replay", "0", "--param", "scenario=partition",
                 "--param", "window=inside", "--param", "mode=transactional",
                 "--trace", str(target)])
    line = one_error_line(capsys.readouterr().err)
    assert code == 1
    assert line == f"kraftsim: error: cannot write trace {target}: No such file or directory"


def test_experiment_replay_timeline_into_a_missing_folder(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """The trace is written; the page that cannot be is named with the system's reason."""
    trace, page = tmp_path / "t.jsonl", tmp_path / "nowhere" / "t.html"
    code = main(["experiment", "failover", "--replay", "0", "--param", "scenario=partition",
                 "--param", "window=inside", "--param", "mode=transactional",
                 "--trace", str(trace), "--timeline", str(page)])
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    assert code == 1 and captured.out == ""
    assert line == f"kraftsim: error: cannot write timeline {page}: No such file or directory"
    assert trace.stat().st_size > 0


def run_and_close_early(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run ``kraftsim ARGS | head -c 1``: read one byte, then close the pipe."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen([sys.executable, "-m", "kraftsim", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=REPO) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read()
        code = proc.wait(timeout=120)
    return subprocess.CompletedProcess(args, code, first, err)


@pytest.mark.parametrize("args", [
    ["dump-log", "noop-heavy/__cluster_metadata-0/00000000000000000000.log"],
    ["dump-log", "--format", "json", "topics-configs/__cluster_metadata-0/"
     "00000000000000000000.log"],
    ["shell", "--format", "json", "--log-dir", "topics-configs", "-c", "find /image"],
    ["shell", "--log-dir", "topics-configs", "-c", "find /image"],
    ["raft-sim", "--json", "--duration", "20000", "--trace", "/dev/stdout"],
], ids=["dump-log", "dump-log-json", "shell-json", "shell-text", "raft-sim-json"])
def test_output_into_a_closed_pipe_stops_quietly(args: list[str]) -> None:
    data = kafka_data()
    args = [str(data / a) if a.startswith(("noop-heavy/", "topics-configs")) else a
            for a in args]
    done = run_and_close_early(args)
    assert done.stdout  # it did start writing
    assert done.stderr == b"", done.stderr.decode()
    # 1, or 0 when Python's buffered writer reports one huge write as partly done
    # instead of raising (it does so for a single write larger than the pipe)
    assert done.returncode in (0, 1)


def test_main_reports_a_broken_pipe_as_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_argv: list[str]) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("kraftsim.dump_log.main", broken)
    assert main(["dump-log", "x"]) == 1


def test_save_of_an_out_of_range_broker_id_is_one_line(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A broker id beyond int32 reaches the log only from code (the shell refuses it)."""
    lab = Lab(ClusterConfig(seed=1, controllers=1, brokers=1))
    lab.cluster.start()
    lab.submit("register-broker", RegisterBroker(2**40), None, 0)
    lab.cluster.run_until(lab.cluster.idle, 10_000)
    target = tmp_path / "saved"
    assert not save_run(lab.cluster.sim, str(target))
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"kraftsim: --save: cannot write {target} in Kafka's format: "
                           f"RegisterBrokerRecord")
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_save_where_no_folder_can_be_made_names_the_reason(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """The one line gives the system's reason in words; a folder that is not empty says so."""
    lab = Lab(ClusterConfig(seed=1, controllers=1, brokers=1))
    lab.cluster.start()
    lab.cluster.run_until(lab.cluster.idle, 10_000)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    target = blocker / "saved"
    assert not save_run(lab.cluster.sim, str(target))
    line = one_error_line(capsys.readouterr().err)
    assert line == f"kraftsim: --save: cannot write {target}: Not a directory"
    assert not save_run(lab.cluster.sim, str(tmp_path))
    line = one_error_line(capsys.readouterr().err)
    assert line == (f"kraftsim: --save: cannot write {tmp_path}: {tmp_path} exists and is "
                    f"not empty")
    assert save_run(lab.cluster.sim, str(tmp_path / "saved"))
    line = one_error_line(capsys.readouterr().err)
    assert line == (f"saved 2 nodes' logs and snapshots in Kafka's layout under "
                    f"{tmp_path / 'saved'}")


def test_run_of_a_script_that_cannot_be_read_is_one_line(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    missing = tmp_path / "missing.txt"
    assert main(["run", str(missing)]) == 1
    captured = capsys.readouterr()
    assert one_error_line(captured.err) == \
        f"kraftsim run: cannot read {missing}: No such file or directory"
    assert captured.out == ""
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"pwd\n\xff\xfe\n")
    assert main(["run", str(binary)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"kraftsim run: cannot read {binary}: 'utf-8' codec can't decode")


def test_run_save_with_an_out_of_range_broker_id(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "big-id.txt"
    script.write_text("cluster controllers=1 brokers=1 seed=1\nregister-broker 99999999999\n"
                      "run-until idle\n")
    code = main(["run", str(script), "--save", str(tmp_path / "saved")])
    out = capsys.readouterr()
    assert code == 1
    assert "register-broker: ID must be at most 2147483647, got 99999999999" in out.out
    assert "Traceback" not in out.err
    assert (tmp_path / "saved" / "broker-0" / "__cluster_metadata-0").is_dir()


@pytest.mark.parametrize("seed", ["-5", str(2**70)])
def test_save_takes_any_seed(seed: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "seed.txt"
    script.write_text(f"cluster controllers=1 brokers=1 seed={seed}\n")
    code = main(["run", str(script), "--save", str(tmp_path / "saved")])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 0, err
    assert (tmp_path / "saved" / "controller-3000" / "meta.properties").is_file()
