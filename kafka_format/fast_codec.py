"""Specialised fast paths of the message codec, generated once per schema version.

:class:`~kafka_format.message_codec.MessageCodec` walks a list of
reader/writer functions, one call per field. For the common case this module
generates (and compiles once, at import) one Python function per schema
version that reads or writes every field inline: a run of fixed-width fields
is one precompiled ``struct`` call, one-byte compact lengths are read in
place, the record is built with positional arguments. This module holds the
generator and the decoders, :mod:`kafka_format.fast_encode` the encoders;
:func:`fast_source` shows any generated source.

The generic codec stays the reference; a fast function only ever agrees with it:

- a fast *decoder* returns a record only when the generic decoder gives the
  same record, with no unknown tagged fields, *and* the bytes are canonical
  (encoding the record gives them back): one-byte varints, bools 0 or 1,
  tagged fields known, ascending and not at their defaults, no tagged fields
  in nested structs. Anything else, damaged bytes included, makes it raise
  (:class:`Fallback` or whatever a bounds check raises), and the caller runs
  the generic decoder, which decides and names any error;
- a fast *encoder* appends exactly the generic encoder's bytes or raises,
  possibly after appending some; the caller cuts those off and runs the
  generic encoder, which gives the bytes or the error.

Reads may run past the value's end (into the rest of the buffer, never past
it): positions only grow, and a decoder gives up unless it ends exactly at
the value's end (or a tagged field's), so a value read that way is never
returned. Every loop is bounded by a one-byte count, so nothing can hang.
"""

from __future__ import annotations

import inspect
import struct
from collections.abc import Callable
from typing import Any

import msgspec

from kafka_format import wire
from kafka_format.message_codec import (
    BOOL,
    INT32,
    REQUIRED,
    UUID,
    Field,
    MessageSchema,
    Primitive,
    StructOf,
    TypeSpec,
    struct_defaults,
)

FastDecoder = Callable[[bytes, int, int], Any]
"""Decodes a message body from ``buf[pos:end]`` (see the module docstring)."""
FastEncoder = Callable[[bytearray, Any], None]
"""Appends a message (body only, or frame and body for a metadata record)."""


class Fallback(Exception):
    """Raised by generated code: the generic codec must handle this value."""


class Unsupported(Exception):
    """A schema feature the generator leaves to the generic codec."""


_SHORT_INT32_RUNS = tuple(struct.Struct(f">{count}i") for count in range(0x7F))
_SHORT_UUID_RUNS = tuple(struct.Struct(">" + "16s" * count) for count in range(0x7F))
_IMMUTABLE = (type(None), bool, int, str, bytes, float)


def _int32_run(count: int) -> struct.Struct:
    return _SHORT_INT32_RUNS[count] if count < 0x7F else struct.Struct(f">{count}i")


def _shareable(value: Any) -> bool:
    """True for a default that every record may share (as the Struct's own default is)."""
    if isinstance(value, tuple):
        return all(_shareable(item) for item in value)
    return isinstance(value, _IMMUTABLE)


class Source:
    """Lines of generated Python and the names they refer to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {
            "Fallback": Fallback,
            "uuid_text": wire.uuid_text,
            "uuid_bytes": wire.uuid_bytes,
            "UUID_TEXTS": wire.UUID_TEXTS,
            "UUID_BYTES": wire.UUID_BYTES,
            "write_uvarint": wire.write_uvarint,
            "int32_run": _int32_run,
            "INT32_RUNS": _SHORT_INT32_RUNS,
            "UUID_RUNS": _SHORT_UUID_RUNS,
        }
        self._counter = 0

    def name(self, hint: str) -> str:
        """A fresh identifier."""
        self._counter += 1
        return f"{hint}_{self._counter}"

    def const(self, value: Any, hint: str = "K") -> str:
        """A global name bound to ``value`` in the generated module."""
        for key, bound in self.namespace.items():
            if bound is value and key.startswith(hint + "_"):
                return key
        key = self.name(hint)
        self.namespace[key] = value
        return key

    def emit(self, indent: int, line: str) -> None:
        """Append one line."""
        self.lines.append("    " * indent + line)


def _fixed_code(spec: TypeSpec) -> str | None:
    return spec.fixed if isinstance(spec, Primitive) else None


def split_fields(fields: tuple[Field, ...], version: int) -> tuple[
    list[Field | list[Field]], list[Field], list[Field]
]:
    """(regular steps, a list being a fixed-width run; tagged fields by tag; absent fields).

    Raises :class:`Unsupported` for tags the generated code does not handle.
    """
    steps: list[Field | list[Field]] = []
    tagged: list[Field] = []
    absent: list[Field] = []
    run: list[Field] = []
    for field in fields:
        if version < field.since:
            absent.append(field)
        elif field.tag is not None:
            tagged.append(field)
        elif _fixed_code(field.type):
            run.append(field)
            continue
        else:
            if run:
                steps.append(run)
                run = []
            steps.append(field)
    if run:
        steps.append(run)
    tags = [f.tag for f in tagged]
    if len(set(tags)) != len(tags) or any(t is None or not 0 <= t < 0x80 for t in tags):
        raise Unsupported("tags")
    tagged.sort(key=lambda f: f.tag or 0)
    return steps, tagged, absent


# --- decoders ------------------------------------------------------------------------------


def _emit_fixed_read(src: Source, targets: list[str], types: list[Primitive], i: int) -> None:
    layout = struct.Struct(">" + "".join(t.fixed or "" for t in types))
    name = src.const(layout, "S")
    unpacked = ", ".join(targets) + ("," if len(targets) == 1 else "")
    src.emit(i, f"{unpacked} = {name}.unpack_from(buf, pos)")
    src.emit(i, f"pos += {layout.size}")
    for target, spec in zip(targets, types, strict=True):
        if spec is UUID:
            src.emit(i, f"{target} = UUID_TEXTS.get({target}) or uuid_text({target})")
        elif spec is BOOL:
            src.emit(i, f"if {target} > 1: raise Fallback")
            src.emit(i, f"{target} = {target} == 1")


def _emit_read(src: Source, spec: TypeSpec, version: int, target: str, bound: str,
               i: int) -> None:  # fmt: skip
    """Lines that read one ``spec`` value at ``pos`` into ``target``."""
    if isinstance(spec, Primitive):
        if spec.fixed:
            _emit_fixed_read(src, [target], [spec], i)
            return
        if spec.name not in ("string", "nullable string", "bytes"):
            raise Unsupported(spec.name)
        size = src.name("size")
        src.emit(i, f"{size} = buf[pos] - 1")
        if spec.name == "bytes":
            src.emit(i, f"if not 0 <= {size} < 0x7F: raise Fallback")
            src.emit(i, f"{target} = bytes(buf[pos + 1 : pos + 1 + {size}])")
            src.emit(i, f"pos += {size} + 1")
            return
        if spec.name == "nullable string":
            src.emit(i, f"if {size} < 0:")
            src.emit(i + 1, f"{target} = None")
            src.emit(i + 1, "pos += 1")
            src.emit(i, f"elif {size} >= 0x7F: raise Fallback")
            src.emit(i, "else:")
            i += 1
        else:
            src.emit(i, f"if not 0 <= {size} < 0x7F: raise Fallback")
        src.emit(i, f"{target} = buf[pos + 1 : pos + 1 + {size}].decode()")
        src.emit(i, f"pos += {size} + 1")
        return
    if isinstance(spec, StructOf):
        reader = src.const(_nested_decoder(spec, version), "R")
        src.emit(i, f"{target}, pos = {reader}(buf, pos, {bound})")
        return
    count = src.name("n")
    src.emit(i, f"{count} = buf[pos] - 1")
    src.emit(i, "pos += 1")
    if spec.nullable:
        src.emit(i, f"if {count} < 0: {target} = None")
        src.emit(i, f"elif {count} >= 0x7F: raise Fallback")
    else:
        src.emit(i, f"if not 0 <= {count} < 0x7F: raise Fallback")
    src.emit(i, f"{'elif' if spec.nullable else 'if'} not {count}: {target} = ()")
    src.emit(i, "else:")
    i += 1
    element = spec.element
    if element is INT32:
        src.emit(i, f"{target} = INT32_RUNS[{count}].unpack_from(buf, pos)")
        src.emit(i, f"pos += 4 * {count}")
    elif element is UUID:
        raw = src.name("raw")
        src.emit(i, f"{raw} = UUID_RUNS[{count}].unpack_from(buf, pos)")
        src.emit(i, f"{target} = tuple(map(UUID_TEXTS.get, {raw}))")  # memoized: no calls
        src.emit(i, f"if None in {target}: {target} = tuple(map(uuid_text, {raw}))")
        src.emit(i, f"pos += 16 * {count}")
    else:
        items, item = src.name("items"), src.name("item")
        src.emit(i, f"{items} = []")
        src.emit(i, f"for _ in range({count}):")
        _emit_read(src, element, version, item, bound, i + 1)
        src.emit(i + 1, f"{items}.append({item})")
        src.emit(i, f"{target} = tuple({items})")


def _emit_regular_reads(src: Source, steps: list[Field | list[Field]], version: int,
                        i: int) -> None:  # fmt: skip
    for step in steps:
        if isinstance(step, list):
            types = [f.type for f in step if isinstance(f.type, Primitive)]
            _emit_fixed_read(src, [f"v_{f.attr}" for f in step], types, i)
        else:
            _emit_read(src, step.type, version, f"v_{step.attr}", "end", i)


_SOURCES: dict[str, str] = {}


def compile_source(src: Source, name: str) -> Any:
    """Compile the generated lines; returns what they define as ``name``."""
    text = "\n".join(src.lines) + "\n"
    exec(compile(text, f"<fast {name}>", "exec"), src.namespace)
    _SOURCES[name] = text
    return src.namespace[name]


def _nested_decoder(spec: StructOf, version: int) -> Callable[[bytes, int, int], Any]:
    """``read(buf, pos, end) -> (value, pos)`` for a nested struct without tagged fields."""
    steps, tagged, _absent = split_fields(spec.fields, version)
    if tagged:
        raise Unsupported("tagged fields in a nested struct")
    src = Source()
    name = f"read_{spec.name}_v{version}"
    src.emit(0, f"def {name}(buf, pos, end):")
    _emit_regular_reads(src, steps, version, 1)
    src.emit(1, "if buf[pos]: raise Fallback")  # the generic codec skips unknown tags
    regular = [f for step in steps for f in (step if isinstance(step, list) else [step])]
    order = {f.attr: n for n, f in enumerate(spec.fields)}
    regular.sort(key=lambda f: order[f.attr])
    values = ", ".join(f"{f.attr!r}: v_{f.attr}" for f in regular)
    src.emit(1, f"return {src.const(spec.build, 'build')}({{{values}}}), pos + 1")
    return compile_source(src, name)  # type: ignore[no-any-return]


def _constructor_args(src: Source, cls: type[Any], present: set[str],
                      defaults: dict[str, Any]) -> str:  # fmt: skip
    """The arguments that build ``cls`` from the decoded ``present`` fields.

    Positional, in field order with the defaults filled in, when the Struct
    takes them so (faster); else by keyword, as the generic codec builds it.
    """
    names = [info.name for info in msgspec.structs.fields(cls)]
    parameters = list(inspect.signature(cls).parameters.values())
    if [p.name for p in parameters] == names and all(
        p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters
    ) and all(n in present or (n in defaults and _shareable(defaults[n])) for n in names):
        return ", ".join(
            f"v_{n}" if n in present else src.const(defaults[n], "D") for n in names
        )
    return ", ".join(f"{n}=v_{n}" for n in names if n in present)


def message_decoder(schema: MessageSchema, version: int) -> FastDecoder:
    """The fast decoder of a message body: ``decode(buf, pos, end) -> record``.

    Raises :class:`Unsupported` when the schema needs the generic codec.
    """
    defaults = struct_defaults(schema.cls)
    steps, tagged, _absent = split_fields(schema.fields, version)
    src = Source()
    name = f"decode_{schema.kafka_name}_v{version}"
    src.emit(0, f"def {name}(buf, pos, end):")
    _emit_regular_reads(src, steps, version, 1)
    for field in tagged:
        default = defaults.get(field.attr, field.default)
        if default is REQUIRED or not _shareable(default):
            raise Unsupported(f"default of {field.attr}")
        src.emit(1, f"v_{field.attr} = {src.const(default, 'D')}")
    src.emit(1, "count = buf[pos]")
    src.emit(1, "pos += 1")
    if tagged:
        src.emit(1, "if count:")
        src.emit(2, "if count > 0x7F: raise Fallback")
        src.emit(2, "last = -1")
        src.emit(2, "for _ in range(count):")
        src.emit(3, "tag = buf[pos]")
        src.emit(3, "size = buf[pos + 1]")
        src.emit(3, "if tag <= last or tag > 0x7F or size > 0x7F: raise Fallback")
        src.emit(3, "last = tag")
        src.emit(3, "pos += 2")
        src.emit(3, "stop = pos + size")
        for n, field in enumerate(tagged):
            src.emit(3, f"{'if' if n == 0 else 'elif'} tag == {field.tag}:")
            _emit_read(src, field.type, version, f"v_{field.attr}", "stop", 4)
            default = src.const(defaults.get(field.attr, field.default), "D")
            src.emit(4, f"if v_{field.attr} == {default}: raise Fallback")
        src.emit(3, "else: raise Fallback")
        src.emit(3, "if pos != stop: raise Fallback")
    else:
        src.emit(1, "if count: raise Fallback")
    src.emit(1, "if pos != end: raise Fallback")
    present = {f.attr for step in steps for f in (step if isinstance(step, list) else [step])}
    present.update(f.attr for f in tagged)
    args = _constructor_args(src, schema.cls, present, defaults)
    src.emit(1, f"return {src.const(schema.cls, 'cls')}({args})")
    return compile_source(src, name)  # type: ignore[no-any-return]


def fast_source(name: str) -> str:
    """The generated source of one fast function, e.g. ``decode_PartitionRecord_v1``."""
    return _SOURCES[name]
