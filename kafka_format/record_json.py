"""Metadata records as JSON, the way Kafka's generated JSON converters write them.

kafka-dump-log's ``--cluster-metadata-decoder`` prints each record's ``data`` with
the converter of its type at the record's version: the schema's fields in schema
order, each under its schema name with the first letter lowercased; a field the
version does not have is left out, and a tagged field is written only when it is
not its default (so a PartitionRecord v0 shows neither ``leaderRecoveryState`` 0
nor ``directories``). Uuids are their base64url text, bytes base64. The field
tables of :mod:`kafka_format.metadata_schemas` carry the order, versions and tags;
a record read at a version newer than modelled is written with the newest one.
"""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

from kafka_format.message_codec import (
    REQUIRED,
    Field,
    Primitive,
    StructOf,
    TypeSpec,
    struct_defaults,
)
from kafka_format.metadata_schemas import METADATA_SCHEMAS
from metadata.schema import MetadataRecord, UnknownRecord, record_to_json

_DEFAULTS: dict[type[Any], dict[str, Any]] = {}


def _defaults(cls: type[Any]) -> dict[str, Any]:
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        defaults = _DEFAULTS[cls] = struct_defaults(cls)
    return defaults


@cache
def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _value(spec: TypeSpec, value: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(spec, Primitive):
        if isinstance(value, bytes | bytearray):
            return base64.b64encode(value).decode("ascii")
        return value
    if isinstance(spec, StructOf):
        return _fields(spec.fields, value, version, {})
    return [_value(spec.element, item, version) for item in value]


def _fields(fields: tuple[Field, ...], obj: Any, version: int,
            defaults: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in fields:
        if version < field.since:
            continue
        value = getattr(obj, field.attr)
        if field.tag is not None:
            default = defaults.get(field.attr, field.default)
            if default is not REQUIRED and value == default:
                continue
        out[_camel(field.attr)] = _value(field.type, value, version)
    return out


def metadata_record_json(record: MetadataRecord, version: int) -> dict[str, Any]:
    """The ``data`` of a metadata record read (or written) at ``version``, as Kafka's
    JSON converter of its type writes it; an :class:`UnknownRecord` as its payload's hex."""
    schema = METADATA_SCHEMAS.get(type(record).API_KEY)
    if isinstance(record, UnknownRecord) or schema is None or not isinstance(record, schema.cls):
        data: dict[str, Any] = record_to_json(record)["data"]  # type: ignore[assignment]
        return data
    return _fields(schema.fields, record, version, _defaults(schema.cls))
