"""A generic codec for Kafka's flexible-version messages, driven by schema tables.

A schema is data: a :class:`MessageSchema` lists :class:`Field` entries, each
with a wire type, the first version that has it and, for a tagged field, its
tag. :func:`compile_codec` turns one schema at one version into a
:class:`MessageCodec`, a list of reader/writer functions, so that decoding does
no per-field interpretation of the table.

Flexible encoding (every metadata schema is ``flexibleVersions 0+``): the
regular fields in order, then a tagged-field section (count, then tag, size,
payload for each, tags ascending). Every struct, including each element of a
struct array, ends with its own tagged-field section.

A field absent from a version, or a tagged field not present in the bytes,
takes its default, which for a record is the default of its Struct attribute.
Unknown tags of the top-level message are handed back to the caller so that a
re-encoding reproduces them; unknown tags inside nested structs are skipped.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import msgspec

from kafka_format import wire
from kafka_format.errors import DecodeError, EncodeError
from kafka_format.wire import TaggedField

Reader = Callable[[bytes, int, int], tuple[Any, int]]
"""Reads one value from ``buf[pos:end]``; returns it and the next position."""
Writer = Callable[[bytearray, Any], None]
"""Appends one value to the output."""


class _Required:
    """Marker of a field without a default."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a field that has none."""


@dataclass(frozen=True)
class Primitive:
    """A wire type that maps to one Python value: int, bool, str, Uuid text.

    ``fixed`` is the ``struct`` code of a fixed-width type; consecutive
    fixed-width fields are read and written with one ``struct`` call.
    """

    name: str
    read: Reader
    write: Writer
    fixed: str | None = None


@dataclass(frozen=True)
class ArrayOf:
    """A compact array; ``nullable`` arrays encode ``None`` as length 0."""

    element: TypeSpec
    nullable: bool = False


@dataclass(frozen=True)
class StructOf:
    """A nested struct (an array element or an inline struct field).

    ``build`` makes the Python value from the decoded fields (a dict keyed by
    attribute name); ``explode`` gives back an object whose attributes are the
    fields to encode (the value itself by default).
    """

    name: str
    fields: tuple[Field, ...]
    build: Callable[[dict[str, Any]], Any]
    explode: Callable[[Any], Any] | None = None


TypeSpec = Primitive | ArrayOf | StructOf
"""Any wire type a field can have."""


@dataclass(frozen=True)
class Field:
    """One field of a schema: Python attribute, wire type, first version, tag."""

    attr: str
    type: TypeSpec
    since: int = 0
    tag: int | None = None
    default: Any = REQUIRED


@dataclass(frozen=True)
class MessageSchema:
    """A message type: its Python class, Kafka name, versions ``0..max_version``."""

    cls: type[Any]
    kafka_name: str
    max_version: int
    fields: tuple[Field, ...]


INT8 = Primitive("int8", wire.read_int8, wire.write_int8, "b")
INT16 = Primitive("int16", wire.read_int16, wire.write_int16, "h")
UINT16 = Primitive("uint16", wire.read_uint16, wire.write_uint16, "H")
INT32 = Primitive("int32", wire.read_int32, wire.write_int32, "i")
INT64 = Primitive("int64", wire.read_int64, wire.write_int64, "q")
BOOL = Primitive("bool", wire.read_bool, wire.write_bool, "B")
UUID = Primitive("uuid", wire.read_uuid, wire.write_uuid, "16s")
FLOAT64 = Primitive("float64", wire.read_float64, wire.write_float64, "d")
BYTES = Primitive("bytes", wire.read_compact_bytes, wire.write_compact_bytes)
STRING = Primitive("string", wire.read_compact_string, wire.write_compact_string)
NULLABLE_STRING = Primitive(
    "nullable string", wire.read_compact_nullable_string, wire.write_compact_nullable_string
)


_INT32_RUNS: dict[int, struct.Struct] = {}


def _int32_run(count: int) -> struct.Struct:
    """The (cached) layout of ``count`` big-endian int32s."""
    layout = _INT32_RUNS.get(count)
    if layout is None:
        layout = struct.Struct(f">{count}i")
        if count <= 256:
            _INT32_RUNS[count] = layout
    return layout


def _int32_array_reader(nullable: bool) -> Reader:
    def read(buf: bytes, pos: int, end: int) -> tuple[tuple[int, ...] | None, int]:
        start = pos
        if pos < end and buf[pos] < 0x80:  # the usual one-byte length
            count = buf[pos] - 1
            pos += 1
        else:
            count, pos = wire.read_compact_length(buf, pos, end, "int32 array")
        if count < 0:
            if nullable:
                return None, pos
            raise DecodeError(f"null array at byte {start} where a value is required", start)
        stop = pos + 4 * count
        if stop > end:
            raise wire.truncated("int32 array", pos, 4 * count, end)
        return _int32_run(count).unpack_from(buf, pos), stop

    return read


def _int32_array_writer(nullable: bool) -> Writer:
    def write(out: bytearray, value: tuple[int, ...] | None) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null where an array is required")
            out.append(0)
            return
        count = len(value)
        if count < 0x7F:
            out.append(count + 1)
        else:
            wire.write_uvarint(out, count + 1)
        out += _int32_run(count).pack(*value)

    return write


def _array_reader(element: Reader, nullable: bool) -> Reader:
    def read(buf: bytes, pos: int, end: int) -> tuple[tuple[Any, ...] | None, int]:
        start = pos
        count, pos = wire.read_compact_length(buf, pos, end, "array")
        if count < 0:
            if nullable:
                return None, pos
            raise DecodeError(f"null array at byte {start} where a value is required", start)
        items = []
        for _ in range(count):
            item, pos = element(buf, pos, end)
            items.append(item)
        return tuple(items), pos

    return read


def _array_writer(element: Writer, nullable: bool) -> Writer:
    def write(out: bytearray, value: tuple[Any, ...] | None) -> None:
        if value is None:
            if not nullable:
                raise EncodeError("null where an array is required")
            out.append(0)
            return
        wire.write_uvarint(out, len(value) + 1)
        for item in value:
            element(out, item)

    return write


def _struct_reader(spec: StructOf, version: int) -> Reader:
    codec = compile_fields(spec.name, spec.fields, version, {})
    build = spec.build

    def read(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        values, _unknown, pos = codec.decode(buf, pos, end)
        return build(values), pos

    return read


def _struct_writer(spec: StructOf, version: int) -> Writer:
    codec = compile_fields(spec.name, spec.fields, version, {})
    explode = spec.explode

    def write(out: bytearray, value: Any) -> None:
        codec.encode(out, value if explode is None else explode(value), ())

    return write


RunReader = Callable[[bytes, int, int], tuple[Any, int]]
"""Reads a run of fixed-width fields; returns their values (a sequence) and the next position."""
RunWriter = Callable[[bytearray, Any], None]
"""Appends a run of fixed-width fields taken from an object's attributes."""


def _fixed_run(name: str, attrs: tuple[str, ...], types: tuple[Primitive, ...]) -> tuple[
    RunReader, RunWriter
]:
    """One struct call for consecutive fixed-width fields (Uuids and bools converted)."""
    layout = struct.Struct(">" + "".join(t.fixed or "" for t in types))
    size = layout.size
    uuids = tuple(i for i, t in enumerate(types) if t is UUID)
    bools = tuple(i for i, t in enumerate(types) if t is BOOL)
    getter = operator.attrgetter(*attrs)

    def read(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        stop = pos + size
        if stop > end:
            raise wire.truncated(f"{name} fields {', '.join(attrs)}", pos, size, end)
        values: Any = layout.unpack_from(buf, pos)
        if uuids or bools:
            values = list(values)
            for index in uuids:
                values[index] = wire.uuid_text(values[index])
            for index in bools:
                values[index] = values[index] != 0
        return values, stop

    def write(out: bytearray, obj: Any) -> None:
        values = list(getter(obj))
        for index in uuids:
            values[index] = wire.uuid_bytes(values[index])
        for index in bools:
            values[index] = 1 if values[index] else 0
        out += layout.pack(*values)

    return read, write


def type_codec(spec: TypeSpec, version: int) -> tuple[Reader, Writer]:
    """The reader and writer of a wire type at a message version."""
    if isinstance(spec, Primitive):
        return spec.read, spec.write
    if isinstance(spec, StructOf):
        return _struct_reader(spec, version), _struct_writer(spec, version)
    if spec.element is INT32:
        return _int32_array_reader(spec.nullable), _int32_array_writer(spec.nullable)
    read, write = type_codec(spec.element, version)
    return _array_reader(read, spec.nullable), _array_writer(write, spec.nullable)


Step = tuple[str | tuple[str, ...], Reader, Writer]
"""One regular field (attribute name), or a run of fixed-width fields (a tuple of names)."""


class MessageCodec:
    """Reads and writes one message type at one version (see :func:`compile_fields`)."""

    def __init__(
        self,
        name: str,
        regular: tuple[Step, ...],
        tagged: tuple[tuple[int, str, Reader, Writer, Any], ...],
        absent: tuple[tuple[str, Any], ...],
    ) -> None:
        self.name = name
        self._regular_readers = tuple((attr, read) for attr, read, _ in regular)
        self._regular_writers = tuple((attr, write) for attr, _, write in regular)
        self._tagged_readers = {tag: (attr, read) for tag, attr, read, _, _ in tagged}
        self._tagged_writers = tuple(
            (tag, attr, write, default) for tag, attr, _, write, default in tagged
        )
        self._absent = absent

    def decode(
        self, buf: bytes, pos: int, end: int
    ) -> tuple[dict[str, Any], tuple[TaggedField, ...], int]:
        """The fields read from ``buf[pos:end]`` (by attribute), unknown tags, next position."""
        values: dict[str, Any] = {}
        for attr, read in self._regular_readers:
            if attr.__class__ is str:
                values[attr], pos = read(buf, pos, end)
            else:
                run, pos = read(buf, pos, end)
                values.update(zip(attr, run, strict=True))
        start = pos
        count, pos = wire.read_uvarint(buf, pos, end)
        if not count:
            return values, (), pos
        if count > end - pos:
            raise DecodeError(f"tagged field count {count} at byte {start} is impossible", start)
        unknown: list[TaggedField] = []
        for _ in range(count):
            tag, size, pos = wire.read_tagged_header(buf, pos, end)
            stop = pos + size
            known = self._tagged_readers.get(tag)
            if known is None:
                unknown.append((tag, buf[pos:stop]))
            else:
                attr, read = known
                values[attr], after = read(buf, pos, stop)
                if after != stop:
                    raise DecodeError(
                        f"tagged field {tag} ({attr}) of {self.name} at byte {pos} "
                        f"declares {size} bytes but its value takes {after - pos}",
                        pos,
                    )
            pos = stop
        return values, tuple(unknown), pos

    def encode(self, out: bytearray, obj: Any, unknown: tuple[TaggedField, ...]) -> None:
        """Append ``obj`` (attributes named as the schema's) and the ``unknown`` tags."""
        for attr, write in self._regular_writers:
            if attr.__class__ is str:
                write(out, getattr(obj, attr))
            else:
                write(out, obj)
        for attr, default in self._absent:
            if getattr(obj, attr) != default:
                raise EncodeError(f"{self.name} cannot hold {attr}={getattr(obj, attr)!r}")
        if not self._tagged_writers and not unknown:
            out.append(0)
            return
        present: list[tuple[int, bytes | bytearray]] = list(unknown)
        for tag, attr, write, default in self._tagged_writers:
            value = getattr(obj, attr)
            if value != default:
                payload = bytearray()
                write(payload, value)
                present.append((tag, payload))
        present.sort(key=lambda item: item[0])
        wire.write_uvarint(out, len(present))
        previous = -1
        for tag, data in present:
            if tag == previous:
                raise EncodeError(f"{self.name} has tagged field {tag} twice")
            previous = tag
            wire.write_tagged_field(out, tag, data)


def compile_fields(
    name: str, fields: tuple[Field, ...], version: int, defaults: dict[str, Any]
) -> MessageCodec:
    """A codec for ``fields`` at ``version``; ``defaults`` override each field's own."""
    regular: list[Step] = []
    tagged: list[tuple[int, str, Reader, Writer, Any]] = []
    absent: list[tuple[str, Any]] = []
    run: list[Field] = []

    def close_run() -> None:
        if len(run) == 1:
            read, write = type_codec(run[0].type, version)
            regular.append((run[0].attr, read, write))
        elif run:
            attrs = tuple(f.attr for f in run)
            types = tuple(f.type for f in run if isinstance(f.type, Primitive))
            regular.append((attrs, *_fixed_run(name, attrs, types)))
        run.clear()

    for field in fields:
        default = defaults.get(field.attr, field.default)
        if version < field.since:
            if default is REQUIRED:
                raise ValueError(f"{name}.{field.attr} needs a default (absent in v{version})")
            absent.append((field.attr, default))
            continue
        if field.tag is None and isinstance(field.type, Primitive) and field.type.fixed:
            run.append(field)
            continue
        read, write = type_codec(field.type, version)
        if field.tag is None:
            close_run()
            regular.append((field.attr, read, write))
        else:
            if default is REQUIRED:
                raise ValueError(f"tagged field {name}.{field.attr} needs a default")
            tagged.append((field.tag, field.attr, read, write, default))
    close_run()
    return MessageCodec(f"{name} v{version}", tuple(regular), tuple(tagged), tuple(absent))


def struct_defaults(cls: type[Any]) -> dict[str, Any]:
    """The defaults of a msgspec Struct's attributes (required ones left out)."""
    defaults: dict[str, Any] = {}
    for info in msgspec.structs.fields(cls):
        if info.default is not msgspec.NODEFAULT:
            defaults[info.name] = info.default
        elif info.default_factory is not msgspec.NODEFAULT:
            defaults[info.name] = info.default_factory()
    return defaults


def compile_codec(schema: MessageSchema, version: int) -> MessageCodec:
    """The codec of a message schema at one version, defaults taken from its Struct."""
    if not 0 <= version <= schema.max_version:
        raise ValueError(f"{schema.kafka_name} has no version {version}")
    return compile_fields(schema.kafka_name, schema.fields, version, struct_defaults(schema.cls))


def as_attributes(values: dict[str, Any]) -> Any:
    """An object whose attributes are ``values`` (for :attr:`StructOf.explode`)."""
    return SimpleNamespace(**values)
