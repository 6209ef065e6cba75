"""Kafka's ``ClientQuotaControlManagerTest``.

kraftsim alters client quotas with the controller operation
:class:`~controller.operations.AlterClientQuotas` (Kafka's ClientQuotaControlManager, in
``controller/operations/quotas.py``). The cases run the operation against an image (its
records, replayed, are the manager's state; a refused entity writes nothing); Kafka's static
checks (configKeysForEntityType, validateQuotaKeyValue, isValidIpEntity) are the module's
functions :func:`~controller.operations.quotas.quota_keys`,
:func:`~controller.operations.quotas.check_quota_value` and
:func:`~controller.operations.quotas.valid_ip_entity`. (``AclControlManagerTest``, once
partly here, is ported whole in ``tests/controller/test_kafka_acl_control_manager_cases.py``.)

kraftsim resolves no host name (a deterministic simulation has no DNS): an ip entity is an IP
literal or ``localhost``; so ``testIsValidIpEntityWithUnresolvableHostname``'s
``example.invalid`` is refused as in Kafka, for that reason alone. Kafka's null entity type
and null quota key (cases of testInvalidEntityTypes and testInvalidQuotaKeys) cannot be
written here: an entity's types and a key are strings.

Not ported: none.
"""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.operations import AlterClientQuotas, QuotaAlteration
from controller.operations.quotas import (
    USER_AND_CLIENT_QUOTA_KEYS,
    check_quota_value,
    quota_keys,
    valid_ip_entity,
)
from metadata.image import MetadataImage
from metadata.schema import (
    ClientQuotaRecord,
    EntityData,
    MetadataRecord,
)
from metadata.security_delta import quota_entity
from tests.controller.kafka_cases import generate, refusal, run
from tests.metadata.kafka_image_cases import image_of

USER = (EntityData("user", "user-1"),)
ENTITY = quota_entity(USER)
PRODUCE, CONSUME = "producer_byte_rate", "consumer_byte_rate"
REQUEST, MUTATION = "request_percentage", "controller_mutation_rate"


def _set(key: str, value: float) -> ClientQuotaRecord:
    return ClientQuotaRecord(USER, key, value)


def _remove(key: str) -> ClientQuotaRecord:
    return ClientQuotaRecord(USER, key, 0.0, remove=True)


def _quotas(image: MetadataImage) -> dict[str, float] | None:
    found = image.client_quotas.get(ENTITY)
    return None if found is None else dict(found)


def test_quotas_set_replaced_and_removed() -> None:
    """ClientQuotaControlManagerTest.testAlterAndRemove, as the records its alterations
    write: a key set, replaced beside a new one, removed (the other stays), a key the
    entity lacks removed (no change), the last key removed (the entity goes), removed
    again (still none), then a mixed update."""
    steps: list[tuple[list[MetadataRecord], dict[str, float] | None]] = [
        ([_set(PRODUCE, 10000.0)], {PRODUCE: 10000.0}),
        ([_set(PRODUCE, 10001.0), _set(CONSUME, 20000.0)],
         {PRODUCE: 10001.0, CONSUME: 20000.0}),
        ([_remove(PRODUCE)], {CONSUME: 20000.0}),
        ([_remove(REQUEST)], {CONSUME: 20000.0}),
        ([_remove(CONSUME)], None),
        ([_remove(CONSUME)], None),
        ([_set(REQUEST, 99.0), _remove(MUTATION), _set(PRODUCE, 10002.0),
          _set(CONSUME, 20001.0)], {REQUEST: 99.0, PRODUCE: 10002.0, CONSUME: 20001.0}),
    ]
    image = MetadataImage.EMPTY
    for records, expected in steps:
        image = image_of(records, image)
        assert _quotas(image) == expected
        assert (ENTITY in image.client_quotas) == (expected is not None)


Entity = tuple[tuple[str, str | None], ...]
Ops = tuple[tuple[str, float | None], ...]


def _alter(image: MetadataImage, *alterations: tuple[Entity, Ops]) -> MetadataImage:
    """Kafka's alterQuotas helper: every entity succeeds; the records are replayed."""
    after, _, response = run(AlterClientQuotas(tuple(QuotaAlteration(e, o)
                                                     for e, o in alterations)), image)
    assert isinstance(response, dict)
    assert all("errorCode" not in entry for entry in response["entries"])
    return after


def _invalid(entity: Entity, ops: Ops) -> ApiError:
    """Kafka's assertInvalidQuota: the entity's result is INVALID_REQUEST and nothing is
    written (the only entity refused: the operation fails with its error)."""
    error = refusal(AlterClientQuotas((QuotaAlteration(entity, ops),)), MetadataImage.EMPTY)
    assert error.code == "INVALID_REQUEST"
    return error


def test_invalid_entity_types() -> None:
    """ClientQuotaControlManagerTest.testInvalidEntityTypes: an unknown type, alone or
    beside a valid one, ip combined with user or client-id, and no entity at all."""
    ops: Ops = (("producer_byte_rate", 10000.0),)
    assert _invalid((("foo", "bar"),), ops).message == \
        "Unhandled client quota entity type: foo"
    assert _invalid((("user", "user-1"), ("foo", "bar")), ops).message == \
        "Unhandled client quota entity type: foo"
    assert _invalid((("foo", "bar"), ("ip", "1.2.3.4")), ops).message == \
        "Unhandled client quota entity type: foo"
    combined = "Invalid quota entity combination, IP entity shouldnot be combined with " \
               "User or ClientId"
    assert _invalid((("user", "user-1"), ("ip", "1.2.3.4")), ops).message == combined
    assert _invalid((("client-id", "user-1"), ("ip", "1.2.3.4")), ops).message == combined
    assert _invalid((), ops).message == "Invalid empty client quota entity"


def test_invalid_quota_keys() -> None:
    """ClientQuotaControlManagerTest.testInvalidQuotaKeys: an unknown key before or after a
    valid one refuses the whole entity."""
    entity: Entity = (("user", "user-1"),)
    for ops in ((("not.a.quota.key", 0.0), ("request_percentage", 99.9)),
                (("request_percentage", 99.9), ("not.a.quota.key", 0.0))):
        assert _invalid(entity, ops).message == "Invalid configuration key not.a.quota.key"


def test_alter_and_remove() -> None:
    """ClientQuotaControlManagerTest.testAlterAndRemove, through the operation: the same
    steps as :func:`test_quotas_set_replaced_and_removed`; removing a key not set writes
    no record."""
    user: Entity = (("user", "user-1"),)
    image = _alter(MetadataImage.EMPTY, (user, ((PRODUCE, 10000.0),)))
    assert _quotas(image) == {PRODUCE: 10000.0}
    image = _alter(image, (user, ((PRODUCE, 10001.0), (CONSUME, 20000.0))))
    assert _quotas(image) == {PRODUCE: 10001.0, CONSUME: 20000.0}
    image = _alter(image, (user, ((PRODUCE, None),)))
    assert _quotas(image) == {CONSUME: 20000.0}
    records, _ = generate(AlterClientQuotas((QuotaAlteration(user, ((REQUEST, None),)),)),
                          image)
    assert records == []
    image = _alter(image, (user, ((CONSUME, None),)))
    assert _quotas(image) is None and ENTITY not in image.client_quotas
    image = _alter(image, (user, ((CONSUME, None),)))
    assert _quotas(image) is None
    image = _alter(image, (user, ((REQUEST, 99.0), (MUTATION, None), (PRODUCE, 10002.0),
                                  (CONSUME, 20001.0))))
    assert _quotas(image) == {REQUEST: 99.0, PRODUCE: 10002.0, CONSUME: 20001.0}


def test_entity_types() -> None:
    """ClientQuotaControlManagerTest.testEntityTypes: user and client-id entities, each
    alone or together, a default (None) name among them, write one record each."""
    quotas: list[tuple[Entity, float]] = [
        ((("user", "user-1"), ("client-id", "client-id-1")), 50.50),
        ((("user", "user-2"), ("client-id", "client-id-1")), 51.51),
        ((("user", "user-3"), ("client-id", "client-id-2")), 52.52),
        ((("user", None), ("client-id", "client-id-1")), 53.53),
        ((("user", "user-1"), ("client-id", None)), 54.54),
        ((("user", "user-3"), ("client-id", None)), 55.55),
        ((("user", "user-1"),), 56.56),
        ((("user", "user-2"),), 57.57),
        ((("user", "user-3"),), 58.58),
        ((("user", None),), 59.59),
        ((("client-id", "client-id-2"),), 60.60),
    ]
    records, _ = generate(AlterClientQuotas(tuple(
        QuotaAlteration(entity, ((REQUEST, value),)) for entity, value in quotas)),
        MetadataImage.EMPTY)
    assert records == [ClientQuotaRecord(tuple(EntityData(t, n) for t, n in entity), REQUEST,
                                         value) for entity, value in quotas]


def test_is_valid_ip_entity() -> None:
    """testIsValidIpEntityWithNull, testIsValidIpEntityWithUnresolvableHostname and
    testIsValidIpEntityWithLocalhost (see the module docs on host names)."""
    assert valid_ip_entity(None)
    assert not valid_ip_entity("example.invalid")
    assert valid_ip_entity("127.0.0.1")
    assert valid_ip_entity("::1")


def test_an_ip_entity_in_brackets_is_an_ipv6_literal() -> None:
    """InetAddress.getByName takes an IPv6 literal in brackets; a name that opens a bracket
    must close it around an IPv6 literal, and a stray bracket makes no literal."""
    assert valid_ip_entity("[::1]") and valid_ip_entity("[1::]")
    for bad in ["[::1", "::1]", "[]", "[127.0.0.1]", "[[::1]]", "127.0.0.1]"]:
        assert not valid_ip_entity(bad), bad
    with pytest.raises(ApiError) as refused:
        quota_keys({"ip": "[::1"})
    assert (refused.value.code, refused.value.message) == (
        "INVALID_REQUEST", "[::1 is not a valid IP or resolvable host.")


_USER_KEYS = {"producer_byte_rate", "consumer_byte_rate", "controller_mutation_rate",
              "request_percentage"}


@pytest.mark.parametrize(("types", "expected"), [
    (("user",), _USER_KEYS),
    (("client-id",), _USER_KEYS),
    (("client-id", "user"), _USER_KEYS),
    (("ip",), {"connection_creation_rate"}),
])
def test_config_keys_for_entity_type(types: tuple[str, ...], expected: set[str]) -> None:
    """testConfigKeysForEntityTypeWithUser, testConfigKeysForEntityTypeWithClientId,
    testConfigKeysForEntityTypeWithUserAndClientId and testConfigKeysForEntityTypeWithIp: the
    quota keys each kind of entity takes."""
    entity: dict[str, str | None] = {t: "127.0.0.1" if t == "ip" else "foo" for t in types}
    assert set(quota_keys(entity)) == expected


@pytest.mark.parametrize(("entity", "message"), [
    ({}, "Invalid empty client quota entity"),
    ({"ip": "127.0.0.1", "user": "foo"},
     "Invalid quota entity combination, IP entity shouldnot be combined with User or "
     "ClientId"),
    ({"ip": "127.0.0.1", "client-id": "foo"},
     "Invalid quota entity combination, IP entity shouldnot be combined with User or "
     "ClientId"),
    ({"ip": "example.invalid"}, "example.invalid is not a valid IP or resolvable host."),
])
def test_config_keys_errors(entity: dict[str, str | None], message: str) -> None:
    """testConfigKeysForEmptyEntity, testConfigKeysForEntityTypeWithIpAndUser,
    testConfigKeysForEntityTypeWithIpAndClientId and testConfigKeysForUnresolvableIpEntity."""
    with pytest.raises(ApiError) as refused:
        quota_keys(entity)
    assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST", message)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("foobar", 1.0, "Invalid configuration key foobar"),
    ("producer_byte_rate", 0.0, "Quota producer_byte_rate must be greater than 0"),
    ("consumer_byte_rate", -2.0, "Quota consumer_byte_rate must be greater than 0"),
    ("consumer_byte_rate", 1234.0, None),
    ("consumer_byte_rate", 36893488147419103232.4,
     "Proposed value for consumer_byte_rate is too large for a LONG."),
    ("consumer_byte_rate", 2.245, "consumer_byte_rate cannot be a fractional value."),
    ("consumer_byte_rate", 1235.0000001, None),
    ("request_percentage", 56.62367, None),
    # Java compares in double: Long.MAX_VALUE reads as 2**63, which is not above it
    ("consumer_byte_rate", float(2**63), None),
    ("consumer_byte_rate", 1e19, "Proposed value for consumer_byte_rate is too large for a LONG."),
    # a remainder of exactly 1e-6 is not above the tolerance
    ("producer_byte_rate", 1e-6, None),
    ("producer_byte_rate", 1.5e-6, "producer_byte_rate cannot be a fractional value."),
])
def test_validate_quota_key_value(key: str, value: float, message: str | None) -> None:
    """testValidateQuotaKeyValueForUnknownQuota, testValidateQuotaKeyValueForZeroQuota,
    testValidateQuotaKeyValueForNegativeQuota, testValidateQuotaKeyValueForValidConsumerByteRate,
    testValidateQuotaKeyValueForConsumerByteRateTooLarge,
    testValidateQuotaKeyValueForFractionalConsumerByteRate,
    testValidateQuotaKeyValueForValidConsumerByteRate2 and
    testValidateQuotaKeyValueForValidRequestPercentage (in this order), against a client-id
    entity's keys."""
    if message is None:
        check_quota_value(USER_AND_CLIENT_QUOTA_KEYS, key, value)
        return
    with pytest.raises(ApiError) as refused:
        check_quota_value(USER_AND_CLIENT_QUOTA_KEYS, key, value)
    assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST", message)


@pytest.mark.parametrize(("value", "message"), [
    (2147483647.0, None),
    (2147483648.0, "Proposed value for connection_creation_rate is too large for an INT."),
    (12.5, "connection_creation_rate cannot be a fractional value."),
])
def test_validate_quota_key_value_of_an_ip_entity(value: float, message: str | None) -> None:
    """validateQuotaKeyValue's INT case, an ip entity's connection_creation_rate: up to
    Integer.MAX_VALUE, whole."""
    keys = quota_keys({"ip": "127.0.0.1"})
    if message is None:
        check_quota_value(keys, "connection_creation_rate", value)
        return
    with pytest.raises(ApiError) as refused:
        check_quota_value(keys, "connection_creation_rate", value)
    assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST", message)


def test_describe_names_default_entities_and_removals() -> None:
    """The operation's one-line description, as the shell and traces show it: a default
    entity as ``<default>``, a removal as ``-key``."""
    op = AlterClientQuotas((
        QuotaAlteration((("user", "bob"), ("client-id", None)),
                        ((PRODUCE, 100.0), (CONSUME, None))),
        QuotaAlteration((("ip", None),), ()),
    ))
    assert op.describe() == ("AlterClientQuotas(user=bob,client-id=<default> "
                             "producer_byte_rate=100.0 -consumer_byte_rate; ip=<default>)")
