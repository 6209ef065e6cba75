"""The shell over real files and the node directory's lock, following the cases of Kafka's
``MetadataShellIntegrationTest``.

Ported: ``testLock``. When another process holds the node directory's ``.lock``
(as a running broker or controller does), the shell refuses the files with
Kafka's message; when it can take the lock, a snapshot that is not there is
the error. Kafka's ``parentParent`` cases are ported as the directory whose lock is
taken: the parent of ``__cluster_metadata-0`` (given as ``--snapshot`` file,
``--log-dir`` node directory or ``--log-dir`` partition directory), and the root
for a file at the root of the file system.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shell.file_source import node_directory_lock, open_files

CHECKPOINT = "00000000000122906351-0000000226.checkpoint"
HOLD_LOCK = textwrap.dedent("""
    import fcntl, sys
    with open(sys.argv[1], "r+b") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX)  # as a Kafka process locks its log directory
        print("locked", flush=True)
        sys.stdin.read()
""")


def test_a_locked_node_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".lock").touch()
    snapshot = tmp_path / "__cluster_metadata-0" / CHECKPOINT
    with subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path / ".lock")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        try:
            for source in (open_files(None, str(snapshot)), open_files(str(tmp_path), None),
                           open_files(str(snapshot.parent), None)):
                assert source.errors == [
                    f"Unable to lock {tmp_path}. Please ensure that no broker or controller "
                    f"process is using this directory before proceeding."]
                assert not source.batches
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)


@pytest.mark.parametrize("with_lock_file", [True, False])
def test_when_the_lock_can_be_taken_the_missing_snapshot_is_the_error(
        tmp_path: Path, with_lock_file: bool) -> None:
    if with_lock_file:
        (tmp_path / ".lock").touch()
    source = open_files(None, str(tmp_path / "__cluster_metadata-0" / CHECKPOINT))
    assert not source.batches
    assert not any("Unable to lock" in problem for problem in source.errors + source.warnings)
    assert any(CHECKPOINT in problem for problem in source.errors + source.warnings)
    with node_directory_lock(tmp_path) as taken:  # nothing was left locked
        assert taken


def test_a_file_at_the_root_of_the_file_system_has_the_root_as_its_node_directory() -> None:
    """testParentParentOfRoot: reading it looks for the root's lock and finds the file
    missing, nothing worse."""
    source = open_files(None, str(Path(Path.cwd().anchor, CHECKPOINT)))
    assert not source.batches
    assert not any("Unable to lock" in problem for problem in source.errors + source.warnings)
