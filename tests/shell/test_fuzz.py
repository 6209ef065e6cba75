"""Fuzzing the shell and the fault language: garbage in, one-line errors out, never a crash.

Lines are drawn with a fixed seed from the shell's command table with
arguments that are sometimes right and often not: huge and malformed numbers,
odd unicode (combining marks, right-to-left text, control characters, lone
surrogates as undecodable command-line bytes become), globs, unbalanced
quotes. Every line runs in-process against a small simulated cluster (a fresh
session every few hundred lines keeps history and state small). A line passes
when the session answers it with output or its own one-line errors: an
``internal error`` (an exception the command did not expect) or an exception
escaping the session fails the test, and so does a line that runs past its
budget (a SIGALRM timer). Numbers are drawn so that simulated-time commands
stay short: any number a command accepts is small, every big one is out of
range.
"""

from __future__ import annotations

import random
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import pytest

from raft.config import ConfigError
from shell.commands import COMMANDS
from sim.faults import KINDS, parse_fault, parse_faults
from tests.shell.shell_recorder import Recorder

SEED = 868
LINES = 10_000
FAULT_STRINGS = 10_000
LINES_PER_SESSION = 250
LINE_BUDGET_S = 20
"""Wall-clock seconds one line may take: generous, it only has to catch a hang."""

START = "cluster controllers=1 brokers=2 seed=1 max-records-per-batch=5"

NUMBERS = ["0", "1", "2", "3", "-1", "-0", "+2", "007", "1_0", "٣", "2147483648",
           "9223372036854775808", "1" + "0" * 40, "9" * 5000, "1e3", "0x1f", "3.5", "nan",
           "", "inf", "½"]
"""Accepted values are at most 10 (``1_0``); every other number is out of any range."""
NODES = ["0", "1", "2", "3000", "3001", "leader", "-1", "99", "0,1", "0,1|3000", "3000|",
         "|", "a,b|c", "leader,0", "3000>0", "9" * 60]
WORDS = ["leader", "idle", "open-txn", "TOPIC:t", "TOPIC:", "BROKER:", "BROKER:0",
         "BROKER:99999999999", "CLUSTER:x", "t", "big", "__consumer_offsets", "retention.ms",
         "cleanup.policy", "-retention.ms", "-", "=", "==", "a=b", "k=", "=v", "mode=atomic",
         "mode=non-atomic", "mode=transactional", "mode=bogus", "retries=2", "rack=r1",
         "timeout=50", "partitions=3", "replication-factor=2", "controllers=1", "brokers=0",
         "seed=5", "fetch-max-records=1", "broker-fetch-lag=10", "max-records-per-batch=3"]
OPTIONS = ["partitions", "replication-factor", "mode", "retries", "rack", "timeout",
           "controllers", "brokers", "seed", "max-records-per-batch", "fetch-max-records",
           "broker-fetch-lag", "retention.ms", "nope"]
PATHS = ["/", ".", "..", "/image", "/local", "/local/*", "/image/topics/byName/*",
         "/image/topics/byName/*/0", "/image/*/*", "/image/{topics,configs}/*",
         "/image/topics/{byName,byId", "/image/**", "/*/*/*/*/*", "/image/topics/byName/t/../..",
         "/" + "*" * 60 + "x", "/local/" + "*?" * 200 + "x", "/image/" + "{a," * 30 + "b",
         "\\", "/image\\/topics", "/image/topics/by?ame", "//", "/nope", "~", "-",
         "/image/cluster/brokers/0", "/image/provenance", "/../../..", "a" * 300]
ODD = ["\u0301", "\u202e", "\u200b", "\x00", "\x1b[2J", "\x7f", "\t", "\udcff", "\ud800",
       "🙂", "漢字", "ß", "İ", "\ufeff", "\\", "{", "}", ",", "*", "?", "#", ";", "|", ">",
       "@", "+", ":", "=", " "]
"""Odd characters; quotes are inserted separately (an unclosed one fails the whole line)."""


def garbage(rng: random.Random) -> str:
    """A short word of odd characters."""
    return "".join(rng.choice(ODD) if rng.random() < 0.5 else chr(rng.randrange(32, 0x2FFF))
                   for _ in range(rng.randint(1, 8)))


def argument(rng: random.Random) -> str:
    """One argument word, from every kind above."""
    kind = rng.random()
    if kind < 0.2:
        return rng.choice(NUMBERS)
    if kind < 0.35:
        return rng.choice(NODES)
    if kind < 0.55:
        return rng.choice(WORDS)
    if kind < 0.7:
        return f"{rng.choice(OPTIONS)}={rng.choice(NUMBERS + WORDS)}"
    if kind < 0.85:
        return rng.choice(PATHS)
    return garbage(rng)


SMALL = ["0", "1", "2", "3", "10", "٣", "1_0"]
"""Accepted numbers: small enough for every command that takes one."""
FIRST_WORDS = {
    "create-topic": ["t", "big", "u", "__consumer_offsets", "a.b", "x" * 249, "x" * 250, "é"],
    "delete-topic": ["t", "big", "missing", ""],
    "alter-config": ["TOPIC:t", "BROKER:", "BROKER:0", "BROKER:99999999999", "TOPIC:missing"],
    "register-broker": [*SMALL, "2147483647", "2147483648", "-1"],
    "tick": [*SMALL, "500"],
    "history": SMALL,
    "partition": ["0,1|3000", "3000", "0|1", "leader", "0,0|0"],
}
"""Plausible first arguments of commands that need one."""


def plausible(rng: random.Random, name: str, names: list[str]) -> list[str]:
    """Arguments much like a user's: the right kinds, small values, sometimes one odd."""
    command = COMMANDS[name]
    words: list[str] = []
    if name in FIRST_WORDS:
        words.append(rng.choice(FIRST_WORDS[name]))
    elif command.words:
        words.append(rng.choice(command.words))
    elif command.completes == "path":
        words.extend(rng.choice(PATHS) for _ in range(rng.randint(0, 2)))
    elif command.completes == "node":
        words.append(rng.choice(NODES[:8]))
    elif command.completes == "command":
        words.append(rng.choice(names))
    if name == "alter-config":
        words.extend(rng.choice(["retention.ms=1000", "cleanup.policy=compact", "-retention.ms",
                                 "min.insync.replicas=2", "bogus.key=1", "retention.ms=x"])
                     for _ in range(rng.randint(1, 3)))
    if name == "log":
        words.extend(rng.choice([*SMALL, "100000"]) for _ in range(rng.randint(0, 2)))
    for option in command.options:
        if rng.random() < 0.3:
            value = (rng.choice(["transactional", "atomic", "non-atomic"]) if option == "mode"
                     else "r1" if option == "rack" else rng.choice(SMALL))
            words.append(f"{option}={value}")
    if rng.random() < 0.2:
        words.insert(rng.randint(0, len(words)), argument(rng))
    return words


def shell_line(rng: random.Random, names: list[str]) -> str:
    """A command name (usually a real one) and its arguments, plausible or random."""
    roll = rng.random()
    if roll < 0.9:
        name = rng.choice(names)
    elif roll < 0.95:
        name = garbage(rng)
    else:
        name = rng.choice(names) + rng.choice(ODD)
    if name in COMMANDS and rng.random() < 0.6:
        words = [name, *plausible(rng, name, names)]
    else:
        words = [name, *(argument(rng) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 5))))]
    if name in ("tick", "run-until") and rng.random() < 0.8:
        words.append(f"timeout={rng.randint(0, 500)}" if name == "run-until"
                     else str(rng.randint(0, 500)))
    line = " ".join(words)
    if rng.random() < 0.05:  # an unbalanced quote somewhere
        cut = rng.randrange(len(line) + 1)
        line = line[:cut] + rng.choice("'\"") + line[cut:]
    return line


class LineTimeout(BaseException):
    """A line ran past its budget (BaseException: the session must not swallow it)."""


@contextmanager
def budget(seconds: int) -> Iterator[None]:
    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise LineTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def new_session() -> Recorder:
    rec = Recorder()
    assert not any(line.startswith("ERR") for line in rec.run(START))
    return rec


def test_random_shell_lines_never_crash_or_hang() -> None:
    rng = random.Random(SEED)
    names = sorted(name for name in COMMANDS if name != "exit")
    problems: list[str] = []
    rec = new_session()
    for number in range(LINES):
        if number % LINES_PER_SESSION == 0 and number:
            rec = new_session()
        line = shell_line(rng, names)
        try:
            with budget(LINE_BUDGET_S):
                out = rec.run(line)
        except LineTimeout:
            problems.append(f"line {number} ran past {LINE_BUDGET_S} s: {line!r}")
            rec = new_session()
            continue
        except Exception as exc:  # none may escape: collect it
            problems.append(f"line {number} raised {type(exc).__name__}: {exc}: {line!r}")
            rec = new_session()
            continue
        internal = [o for o in out if "internal error" in o]
        if internal:
            problems.append(f"line {number}: {internal[0]!r} from {line!r}")
        assert all("\n" not in o for o in out)
    assert problems == []


KIND_WORDS = [*KINDS, "random", "Crash", "crash ", "", "heal:0", "kill", "pause "]
TARGETS = ["0", "3000", "leader", "0,1|2", "0,1|2|3", "0|", "|1", "0,|1", "1>2", "1>", ">",
           "0,1", "٣", "1" * 50, "leader|0", " 0", "", "@", "a"]
TIMES = ["0", "10", "5000", "-1", "1" * 30, "٣٣", "", "1.5", "1e3", " 5", "0x10"]


def valid_fault(rng: random.Random) -> str:
    """A fault the language accepts (times and ids may still be huge)."""
    kind = rng.choice(KINDS)
    at = rng.choice(["0", "10", "5000", "1" * 30, "٣٣"])
    node = rng.choice(["0", "3000", "leader", "1" * 30])
    if kind == "heal":
        return f"heal@{at}"
    if kind == "restart":
        node = rng.choice(["0", "3000", "1" * 30])
    if kind == "partition":
        node = rng.choice(["0,1|2", "0|1|2", "3000|0,1,2"])
    if kind == "block":
        node = rng.choice(["0>1", "3000>0"])
    return f"{kind}:{node}@{at}" + (f"+{rng.choice(['1', '500', '9' * 20])}"
                                    if kind == "pause" else "")


def fault_item(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return valid_fault(rng)
    kind = rng.choice(KIND_WORDS)
    if kind == "heal" and rng.random() < 0.5:
        text = f"heal@{rng.choice(TIMES)}"
    else:
        text = f"{kind}:{rng.choice(TARGETS)}@{rng.choice(TIMES)}"
        if rng.random() < 0.4:
            text += f"+{rng.choice(TIMES)}"
    if rng.random() < 0.2:  # damage: drop, double or insert a character
        cut = rng.randrange(len(text) + 1)
        text = text[:cut] + rng.choice(["", "@", ":", "+", "|", ";", rng.choice(ODD)]) + \
            text[cut + rng.randint(0, 1):]
    return text


def test_random_fault_strings_parse_or_fail_with_config_error() -> None:
    rng = random.Random(SEED)
    problems: list[str] = []
    parsed = 0
    for _ in range(FAULT_STRINGS):
        text = ";".join(fault_item(rng) for _ in range(rng.choice((1, 1, 1, 2))))
        try:
            specs = parse_faults([text])
        except ConfigError as exc:
            assert "\n" not in str(exc)
            continue
        except Exception as exc:  # none may escape: collect it
            problems.append(f"{type(exc).__name__}: {exc}: {text!r}")
            continue
        parsed += 1
        for spec in specs:  # what was accepted reads back the same
            assert parse_fault(spec.render()) == spec, text
    assert problems == []
    assert parsed > FAULT_STRINGS // 10  # the generator reaches the valid language too


@pytest.mark.parametrize("line", [
    "ls /" + "*" * 10_000 + "x", "cat " + "'" * 10_001, "tick " + "9" * 5000,
    "create-topic " + "x" * 100_000, "register-broker 2147483648", "history 1" + "0" * 40,
    "create-topic \udcff", "alter-config BROKER:99999999999 a=b",
])
def test_edge_lines_are_one_line_errors_or_work(line: str) -> None:
    rec = new_session()
    out = rec.run(line, "run-until idle timeout=500")
    assert not any("internal error" in o for o in out), out
