from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state.records import Records

# Values the standard library reads one way and a fast reader may read another: each must
# read from a record's entry exactly as json.loads reads it.
_VALUES = [
    "18446744073709551616",  # 2**64: orjson would read a float
    "-9223372036854775809",  # below -2**63
    "123456789012345678901234567890",
    "18446744073709551615",
    "-9223372036854775808",
    "999999999999999999",
    "0.1000000000000000055511151231257827",
    "1e400",
    "-1e400",
    "NaN",
    "-Infinity",
    "-0",
    "-0.0",
    "4.9e-324",
    "2.2250738585072014e-308",
    '"\\ud800"',  # a lone surrogate
    '"\\ud83d\\ude00"',
    '"caf\\u00e9 \\/ \\u0000"',
    '"café"',
    '{"a": 1, "b": 2, "a": 3}',
    "[" * 200 + "]" * 200,
]


def _entry(value: str) -> tuple[bytes, str]:
    body = '{"status": "applied", "operation": "create", "spec": {"v": ' + value + "}}"
    return b'"Movement/a": ' + body.encode("utf-8", "surrogatepass"), body


@pytest.mark.parametrize("value", _VALUES)
def test_a_record_reads_as_the_standard_library_reads_it(value: str) -> None:
    entry, body = _entry(value)
    records = Records.from_entries({"Movement/a": entry}, Path("state.json"))
    expected = json.loads(body)["spec"]
    spec = records.peek("Movement/a").spec
    assert repr(spec) == repr(expected)
    assert type(spec["v"]) is type(expected["v"])


@pytest.mark.parametrize("value", _VALUES)
def test_a_database_row_reads_as_the_standard_library_reads_it(value: str) -> None:
    _, body = _entry(value)
    records = Records.from_texts({"Movement/a": body}, "the state s in the database")
    expected = json.loads(body)["spec"]
    spec = records.peek("Movement/a").spec
    assert repr(spec) == repr(expected)
    assert type(spec["v"]) is type(expected["v"])


def test_a_database_row_with_a_lone_surrogate_reads_as_the_standard_library_reads_it() -> None:
    body = '{"status": "applied", "operation": "create", "spec": {"v": "\ud800"}}'
    records = Records.from_texts({"Movement/a": body}, "the state s in the database")
    assert records.peek("Movement/a").spec == json.loads(body)["spec"]


@pytest.mark.parametrize(
    "entry",
    [
        b'"Movement/a": {"status": "applied", "operation": "c", "spec": {"v": 1,}}',
        b'"Movement/a": {"status": "applied", "operation": "c"} trailing',
        b'"Movement/a": {"status": "applied", "operation": "\xff"}',
        b'"Movement/a": {"status": "applied", "operation": "a\tb"}',
    ],
)
def test_a_corrupt_record_is_the_error_it_always_was(entry: bytes) -> None:
    body = entry[entry.index(b'": {') + 3 :]
    with pytest.raises((ValueError, UnicodeDecodeError)) as standard:
        json.loads(body)
    records = Records.from_entries({"Movement/a": entry}, Path("state.json"))
    with pytest.raises(StateError) as caught:
        records.peek("Movement/a")
    assert f"state.json: the record of Movement/a is corrupt ({standard.value})" in str(
        caught.value
    )
