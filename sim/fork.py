"""Forking a booted simulation: a copy that is cheap and faithful.

A sweep runs thousands of simulations of one cluster configuration, and each
used to boot its cluster from nothing (elections, broker registration: a
third of a failover run). :class:`BootCache` boots a configuration once and
hands every run a fork of it; :meth:`sim.cluster.KRaftCluster.reseed` then
gives the fork the run's own random streams.

A :class:`Frozen` world is pickled once (in memory, never to disk); each
:meth:`Frozen.fork` unpickles it, in C, which costs a fraction of a boot.
Pickling follows rules of its own:

- immutable values are shared, not copied: frozen ``msgspec`` Structs (every
  record, image and registration), ``immutables.Map`` (persistent maps hold
  only such values), functions without a closure. A frozen Struct must
  therefore hold only immutable values: one holding a callback would hand the
  fork the original's closure (so ``broker.txn.prereg``'s held begins are
  plain Structs); enum members are shared as well (each is one object);
- a function with a closure (``lambda: sim.now``, a listener) is rebuilt with
  copies of its cells, so the fork's callbacks reach the fork's objects;
- :class:`sim.trace.Trace` is rebuilt with a copy of its running hash (a
  trace writing to a file cannot be forked: its lines so far are in the
  original's file);
- classes are shared too, with no look-up of a class by name: a first pass
  finds every shared object, the pickle proper names each by its index in the
  pickler's memo, and every fork's unpickler starts with a copy of a memo
  holding them at those indices (made once, copied in C), so a shared object
  costs a memo read, not a Python call;
- an exception (a run's InvariantViolation, a handle's ApiError) is rebuilt
  without its ``__init__``, from its args and attributes.

A fork computes exactly what the original would: a test runs failover specs
on forked and on freshly booted clusters and compares rows and trace
fingerprints.
"""

from __future__ import annotations

import copyreg
import enum
import io
import pickle
import pickletools
import random
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import immutables
import msgspec

from sim.seeds import PENDING_STREAM
from sim.trace import Trace

T = TypeVar("T")
_ATOMS = frozenset({int, str, float, bool, bytes, type(None)})
"""Immutable values a shared tuple may hold (besides shared ones and such tuples)."""
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class statement made the class


def _frozen_struct(cls: type) -> bool:
    config = getattr(cls, "__struct_config__", None)
    return isinstance(config, msgspec.structs.StructConfig) and config.frozen


def _plain_class(cls: type) -> bool:
    """A class defined in Python whose instances pickle as their ``__dict__``."""
    return (type(cls) is type and not issubclass(cls, type) and bool(cls.__flags__ & _HEAP_TYPE)
            and cls.__dictoffset__ != 0
            and not hasattr(cls, "__slots__") and not hasattr(cls, "__setstate__")
            and cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
            and cls.__getstate__ is object.__getstate__)


_FUNCTION_DEFAULTS: dict[str, Callable[[types.FunctionType], Any]] = {
    "__kwdefaults__": lambda function: None,
    "__qualname__": lambda function: function.__code__.co_qualname,
}
"""What FunctionType(code, ...) gives a function: a fork sets only what differs."""


def _cell_state(cell: Any) -> tuple[Any, ...]:
    """A cell's contents as a tuple: ``()`` for an empty cell, ``(None,)`` for one holding
    None."""
    try:
        return (cell.cell_contents,)
    except ValueError:
        return ()


def _random_from_state(state: tuple[Any, ...]) -> random.Random:
    # Not Random(): that would read urandom. A fork is usually reseeded at once, so the
    # state waits for a first draw (sim.seeds.seed_later, inline: one call per stream).
    rng: random.Random = random.Random.__new__(PENDING_STREAM)
    rng.__dict__["_pending"] = state
    return rng


class _TraceOrigin:
    """The trace a fork's trace goes on from (shared with every fork, never copied)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace


def _trace_copy(origin: _TraceOrigin) -> Trace:
    return origin.trace.copy()


_PROTOCOL = 3
"""The pickle protocol of a frozen world. Its BINPUT names the memo index it stores at,
so an unpickler whose memo starts with the shared objects stores the world's own objects
after them; protocol 4's MEMOIZE stores at the count of objects it memoized itself, which
a memo copied in (CPython 3.11's ``Unpickler.memo`` setter) leaves at 0."""


class _Pickler(pickle.Pickler):
    """Pickles a world (see the module docs).

    Two passes: the first, a :class:`_Finder`, finds what is shared (its
    ``persistent_id``) and its output is dropped; the second (``finder`` given) starts
    with every shared object in its memo, so it writes a memo look-up for each, which a
    fork's unpickler, its memo copied from a template holding the same objects, reads
    in C (no Python call per shared object).
    """

    def __init__(self, out: io.BytesIO, shared: list[Any],
                 finder: _Pickler | None = None) -> None:
        super().__init__(out, protocol=_PROTOCOL)
        self.shared = shared
        self._ids: dict[int, int] = {}
        self._frozen: dict[type, bool] = {}
        self._pinned: set[int] = set()
        self._plain: dict[type, bool] = {}
        self._immutables: dict[int, bool] = {}
        self._pinned_alive: list[Any] = []
        # The objects a reduction makes (a trace's origin, a stream's state), made once
        # so that the second pass finds the first pass's ones in its memo.
        self._made: dict[int, Any] = finder._made if finder is not None else {}
        if finder is not None:
            self.memo = {id(obj): (index, obj) for index, obj in enumerate(shared)}

    def _share(self, obj: Any) -> int:
        index = self._ids.get(id(obj))
        if index is None:
            index = self._ids[id(obj)] = len(self.shared)
            self.shared.append(obj)
        return index

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if cls is types.FunctionType:  # with a closure (the others are shared)
            # Rebuilt by FunctionType itself and set up by pickle's BUILD, in C: no
            # Python call per function (its name and qualified name come with its code).
            self._pinned.add(id(obj.__globals__))
            slots = {name: getattr(obj, name) for name in ("__kwdefaults__", "__qualname__")
                     if getattr(obj, name) != _FUNCTION_DEFAULTS[name](obj)}
            state = (obj.__dict__ or None, slots) if obj.__dict__ or slots else None
            return (types.FunctionType, (obj.__code__, obj.__globals__, obj.__name__,
                                         obj.__defaults__, obj.__closure__), state)
        if cls is types.CellType:  # made empty, filled by BUILD (it may hold its function)
            contents = _cell_state(obj)
            return (copyreg.__newobj__, (types.CellType,),  # type: ignore[attr-defined]
                    (None, {"cell_contents": contents[0]}) if contents else None)
        if cls is Trace:
            if obj.out is not None:
                raise ValueError("a trace written to a file cannot be forked")
            origin = self._made.get(id(obj))
            if origin is None:
                origin = self._made[id(obj)] = _TraceOrigin(obj)
            return (_trace_copy, (origin,))
        if cls is random.Random or cls is PENDING_STREAM:
            state = self._made.get(id(obj))
            if state is None:
                state = self._made[id(obj)] = obj.getstate()
                self._share(state)  # kept alive by the shared list: its id stays its own
                self._pinned.add(id(state))
            return (_random_from_state, (state,))
        plain = self._plain.get(cls)
        if plain is None:
            plain = self._plain[cls] = _plain_class(cls)
        if plain:
            # A plain instance: its attributes come back one by one (setattr), as
            # __init__ set them, so CPython keeps them inline (faster to read) rather
            # than in a dict of their own.
            return (copyreg.__newobj__, (cls,), (None, obj.__dict__))  # type: ignore[attr-defined]
        if issubclass(cls, BaseException):
            # pickle's own way calls cls(*args), which fails for an exception whose
            # __init__ takes other arguments than its args (InvariantViolation(invariant,
            # message) keeps one): made without __init__, its attributes set back
            return (copyreg.__newobj__, (cls, *obj.args),  # type: ignore[attr-defined]
                    obj.__dict__ or None)
        return NotImplemented


class _Finder(_Pickler):
    """The first pass: what a fork shares."""

    def persistent_id(self, obj: Any) -> Any:
        cls = type(obj)
        if cls is str:  # decoded and hashed once, and attribute names stay interned
            return self._share(obj)
        # (a class or an enum member too: unpickled with no look-up by name or value)
        if cls is immutables.Map or cls is types.CodeType or cls is types.ModuleType \
                or cls is _TraceOrigin or issubclass(cls, (type, enum.Enum)):
            return self._share(obj)
        if cls is types.FunctionType:
            return self._share(obj) if obj.__closure__ is None else None
        if (cls is dict or cls is tuple) and id(obj) in self._pinned:
            return self._share(obj)  # a module's globals or a random state, shared as is
        if (cls is tuple or cls is frozenset) and self._immutable(obj):
            return self._share(obj)
        frozen = self._frozen.get(cls)
        if frozen is None:
            frozen = self._frozen[cls] = _frozen_struct(cls)
        return self._share(obj) if frozen else None

    def _immutable(self, obj: Any) -> bool:
        """Whether ``obj`` and all it holds can never change (so a fork may share it)."""
        cls = type(obj)
        if cls in _ATOMS:
            return True
        if cls is tuple or cls is frozenset:
            known = self._immutables.get(id(obj))
            if known is None:
                known = self._immutables[id(obj)] = all(self._immutable(item) for item in obj)
                self._pinned_alive.append(obj)  # its id stays its own while pickling
            return known
        if cls is immutables.Map or issubclass(cls, enum.Enum):
            return True
        frozen = self._frozen.get(cls)
        if frozen is None:
            frozen = self._frozen[cls] = _frozen_struct(cls)
        return frozen


class Frozen(Generic[T]):
    """A value pickled once in memory; :meth:`fork` gives a new copy each time."""

    def __init__(self, value: T) -> None:
        self._shared: list[Any] = []
        finder = _Finder(io.BytesIO(), self._shared)
        finder.dump(value)
        out = io.BytesIO()
        _Pickler(out, self._shared, finder).dump(value)
        self._data = _without_unused_puts(out.getvalue())
        self.size = len(self._data)
        self._buffer = max(io.DEFAULT_BUFFER_SIZE, self.size)
        self._template = _memo_template(self._shared)

    def fork(self) -> T:
        """A copy of the value as it was when frozen."""
        # (a reader with peek and room for it all: the unpickler takes it in one read; from
        # a BytesIO it would call read() once per opcode, as protocol 3 has no frames)
        unpickler = pickle.Unpickler(io.BufferedReader(io.BytesIO(self._data), self._buffer))
        unpickler.memo = self._template.memo  # the shared objects, copied in C
        value: T = unpickler.load()
        return value


_PUT_SIZES = {"BINPUT": 2, "LONG_BINPUT": 5}
"""Bytes of the memo-store opcodes a protocol-3 pickler writes (opcode and index)."""
_GETS = frozenset({"BINGET", "LONG_BINGET"})


def _without_unused_puts(data: bytes) -> bytes:
    """``data`` less the memo stores that no later opcode reads back.

    The pickler stores every object it writes in its memo, in case it meets it again;
    most are met once (a booted cluster: 690 of 750), and each store costs every fork a
    memo write and the memo a slot to free. The indices of the stores kept do not change,
    so the reads of the shared objects' indices (see :func:`_memo_template`) stay right.
    """
    ops = list(pickletools.genops(data))
    read = {arg for op, arg, _ in ops if op.name in _GETS}
    out, start = bytearray(), 0
    for op, arg, position in ops:
        size = _PUT_SIZES.get(op.name)
        if size is not None and arg not in read:
            assert position is not None  # (always known when reading bytes)
            out += data[start:position]
            start = position + size
    out += data[start:]
    return bytes(out)


def _memo_template(shared: list[Any]) -> pickle.Unpickler:
    """An unpickler whose memo holds ``shared[i]`` at index i, for forks to copy."""
    seed = bytearray(pickle.PROTO + bytes([_PROTOCOL]))
    for index in range(len(shared)):
        seed += pickle.dumps(index, protocol=_PROTOCOL)[2:-1]  # the index, as an int opcode
        seed += pickle.BINPERSID  # shared[index] on the stack,
        seed += pickle.LONG_BINPUT + index.to_bytes(4, "little")  # memo[index] = it,
        seed += pickle.POP  # and off the stack
    seed += pickle.NONE + pickle.STOP
    template = pickle.Unpickler(io.BytesIO(bytes(seed)))
    template.persistent_load = shared.__getitem__  # type: ignore[method-assign]
    template.load()
    return template


def fork(value: T) -> T:
    """A copy of ``value`` (a booted cluster and whatever goes with it); see above."""
    return Frozen(value).fork()


class BootCache(Generic[T]):
    """Booted worlds by configuration key, each handed out as a fresh fork.

    ``get(key, boot)`` boots with ``boot()`` the first time a key is asked
    for, freezes that world and returns a fork of it every time. At most
    ``size`` configurations are kept (the least recently used goes).
    """

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._booted: OrderedDict[bytes, Frozen[T]] = OrderedDict()
        self.boots = 0
        self.forks = 0

    def get(self, key: bytes, boot: Callable[[], T]) -> T:
        """A fork of the world booted for ``key``."""
        booted = self._booted.get(key)
        if booted is None:
            booted = Frozen(boot())
            self.boots += 1
            self._booted[key] = booted
            while len(self._booted) > self.size:
                self._booted.popitem(last=False)
        else:
            self._booted.move_to_end(key)
        self.forks += 1
        return booted.fork()

    def clear(self) -> None:
        """Forget every booted world."""
        self._booted.clear()
