"""Generated fast encoders: the writing half of :mod:`kafka_format.fast_codec`.

A fast encoder appends exactly what the generic
:class:`~kafka_format.message_codec.MessageCodec` appends, or raises
(possibly after appending some bytes; the caller cuts them off and runs the
generic encoder, which gives the bytes or the error).

One function is generated per schema version: it writes field after field,
a run of fixed-width fields with one precompiled ``struct`` call, one-byte
lengths appended in place, tagged fields tested against their defaults.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from kafka_format.fast_codec import (
    FastEncoder,
    Source,
    Unsupported,
    compile_source,
    split_fields,
)
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


def _fixed_args(values: list[str], types: list[Primitive]) -> list[str]:
    """The ``struct`` arguments of fixed-width values (Uuids as bytes, bools as 0/1)."""
    args = []
    for value, spec in zip(values, types, strict=True):
        if spec is UUID:
            args.append(f"UUID_BYTES.get({value}) or uuid_bytes({value})")
        elif spec is BOOL:
            args.append(f"1 if {value} else 0")
        else:
            args.append(value)
    return args


def _emit_fixed_write(src: Source, values: list[str], types: list[Primitive], out: str,
                      i: int) -> None:  # fmt: skip
    layout = struct.Struct(">" + "".join(t.fixed or "" for t in types))
    args = ", ".join(_fixed_args(values, types))
    src.emit(i, f"{out} += {src.const(layout, 'S')}.pack({args})")


def _emit_write_length(src: Source, length: str, out: str, i: int) -> None:
    src.emit(i, f"if {length} < 0x80: {out}.append({length})")
    src.emit(i, f"else: write_uvarint({out}, {length})")


def _emit_write(src: Source, spec: TypeSpec, version: int, value: str, out: str,
                i: int) -> None:  # fmt: skip
    """Lines that append the encoding of local ``value``."""
    if isinstance(spec, Primitive):
        if spec.fixed:
            _emit_fixed_write(src, [value], [spec], out, i)
            return
        if spec.name not in ("string", "nullable string", "bytes"):
            raise Unsupported(spec.name)
        if spec.name == "bytes":
            src.emit(i, f"if {value}.__class__ is not bytes: raise Fallback")
            src.emit(i, f"{value}_n = len({value}) + 1")
            _emit_write_length(src, f"{value}_n", out, i)
            src.emit(i, f"{out} += {value}")
            return
        if spec.name == "nullable string":
            src.emit(i, f"if {value} is None: {out}.append(0)")
            src.emit(i, "else:")
            i += 1
        data = src.name("data")
        src.emit(i, f"{data} = {value}.encode('utf-8')")
        src.emit(i, f"{data}_n = len({data}) + 1")
        src.emit(i, f"if {data}_n > 0x8000: raise Fallback")  # the generic encoder refuses it
        _emit_write_length(src, f"{data}_n", out, i)
        src.emit(i, f"{out} += {data}")
        return
    if isinstance(spec, StructOf):
        src.emit(i, f"{src.const(_nested_encoder(spec, version), 'W')}({out}, {value})")
        return
    if spec.nullable:
        src.emit(i, f"if {value} is None: {out}.append(0)")
        src.emit(i, "else:")
        i += 1
    count = src.name("n")
    src.emit(i, f"{count} = len({value})")
    if spec.element is INT32:
        src.emit(i, f"if {count} < 0x7F:")
        src.emit(i + 1, f"{out}.append({count} + 1)")
        src.emit(i + 1, f"if {count}: {out} += INT32_RUNS[{count}].pack(*{value})")
        src.emit(i, "else:")
        src.emit(i + 1, f"write_uvarint({out}, {count} + 1)")
        src.emit(i + 1, f"{out} += int32_run({count}).pack(*{value})")
        return
    if spec.element is UUID:
        raw = src.name("raw")
        src.emit(i, f"if {count} < 0x7F:")
        src.emit(i + 1, f"{out}.append({count} + 1)")
        src.emit(i + 1, f"if {count}:")
        src.emit(i + 2, f"{raw} = tuple(map(UUID_BYTES.get, {value}))")  # memoized: no calls
        src.emit(i + 2, f"if None in {raw}: {raw} = tuple(map(uuid_bytes, {value}))")
        src.emit(i + 2, f"{out} += UUID_RUNS[{count}].pack(*{raw})")
        src.emit(i, "else:")
        src.emit(i + 1, f"write_uvarint({out}, {count} + 1)")
        src.emit(i + 1, f"{out} += b''.join(map(uuid_bytes, {value}))")
        return
    src.emit(i, f"{count} += 1")
    _emit_write_length(src, count, out, i)
    item = src.name("item")
    src.emit(i, f"for {item} in {value}:")
    _emit_write(src, spec.element, version, item, out, i + 1)


def _emit_absent_checks(src: Source, absent: list[Field], defaults: dict[str, Any],
                        i: int) -> None:  # fmt: skip
    for field in absent:
        default = defaults.get(field.attr, field.default)
        if default is REQUIRED:
            raise Unsupported(f"absent {field.attr} without a default")
        src.emit(i, f"if obj.{field.attr} != {src.const(default, 'D')}: raise Fallback")


def _emit_tagged_writes(src: Source, tagged: list[Field], version: int,
                        defaults: dict[str, Any], i: int) -> None:  # fmt: skip
    """The tagged-field section: the count, then each field not at its default."""
    if not tagged:
        src.emit(i, "out.append(0)")
        return
    flags = []
    for field in tagged:
        default = defaults.get(field.attr, field.default)
        if default is REQUIRED:
            raise Unsupported(f"tagged {field.attr} without a default")
        src.emit(i, f"v_{field.attr} = obj.{field.attr}")
        src.emit(i, f"f_{field.attr} = v_{field.attr} != {src.const(default, 'D')}")
        flags.append(f"f_{field.attr}")
    src.emit(i, f"out.append({' + '.join(flags)})")
    for field in tagged:
        src.emit(i, f"if f_{field.attr}:")
        src.emit(i + 1, "payload = bytearray()")
        _emit_write(src, field.type, version, f"v_{field.attr}", "payload", i + 1)
        src.emit(i + 1, f"out.append({field.tag})")
        src.emit(i + 1, "size = len(payload)")
        _emit_write_length(src, "size", "out", i + 1)
        src.emit(i + 1, "out += payload")


def _emit_encode_body(src: Source, fields: tuple[Field, ...], version: int,
                      defaults: dict[str, Any], i: int) -> None:  # fmt: skip
    """The lines that append the fields of local ``obj`` to ``out``, tagged section last."""
    steps, tagged, absent = split_fields(fields, version)
    _emit_absent_checks(src, absent, defaults, i)
    for step in steps:
        if isinstance(step, list):
            types = [f.type for f in step if isinstance(f.type, Primitive)]
            _emit_fixed_write(src, [f"obj.{f.attr}" for f in step], types, "out", i)
        else:
            src.emit(i, f"v_{step.attr} = obj.{step.attr}")
            _emit_write(src, step.type, version, f"v_{step.attr}", "out", i)
    _emit_tagged_writes(src, tagged, version, defaults, i)


def _nested_encoder(spec: StructOf, version: int) -> Callable[[bytearray, Any], None]:
    src = Source()
    name = f"write_{spec.name}_v{version}"
    src.emit(0, f"def {name}(out, obj):")
    if spec.explode is not None:
        src.emit(1, f"obj = {src.const(spec.explode, 'explode')}(obj)")
    _emit_encode_body(src, spec.fields, version, {}, 1)
    return compile_source(src, name)  # type: ignore[no-any-return]


def message_encoder(schema: MessageSchema, version: int, prefix: bytes = b"") -> FastEncoder:
    """The fast encoder of a message: ``encode(out, obj)`` appends ``prefix`` and the body.

    Raises :class:`Unsupported` when the schema needs the generic codec.
    """
    src = Source()
    name = f"encode_{schema.kafka_name}_v{version}"
    src.emit(0, f"def {name}(out, obj):")
    if prefix:
        src.emit(1, f"out += {src.const(prefix, 'P')}")
    _emit_encode_body(src, schema.fields, version, struct_defaults(schema.cls), 1)
    return compile_source(src, name)  # type: ignore[no-any-return]
