"""Text no UTF-8 can carry: a lone surrogate escape (``"\\ud800"``) is a 400, never stored.

JSON may spell a UTF-16 surrogate as an escape; alone, without its other half, it is no
character, and an answer quoting it could not be written in UTF-8. The emulator refuses
it where it reads the body, before anything is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from customs_batch.errors import ConfigError
from customs_batch.sandbox.seed import builtin_seed_text, parse_seed
from customs_batch.sandbox.web import json_response
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, movement

GROUPS = "/v1/declaration-templates/groups"
JSON = {"Content-Type": "application/json"}


def _movement_text(**fields: str) -> str:
    """A movement body as JSON text, with ``fields`` written raw (escapes kept as sent)."""
    text = json.dumps(movement(hawbId="hawb_a2"))[:-1]
    return text + "".join(f', "{name}": {raw}' for name, raw in fields.items()) + "}"


_DECLARATION = (
    '{"source": "EXTERNAL", "documentType": "X", "declarationType": "IM", '
    '"declarationNumber": "\\udc00"}'
)

REPROS = [
    pytest.param(
        "POST", GROUPS, '{"name":"\\udc00","code":"A16","companyId":1}', "name", id="group"
    ),
    pytest.param("PATCH", f"{GROUPS}/1", '{"name":"\\ud800"}', "name", id="patch"),
    pytest.param(
        "POST",
        MOVEMENTS,
        _movement_text(customsDeclaration=_DECLARATION),
        "customsDeclaration.declarationNumber",
        id="movement",
    ),
    pytest.param(
        "POST",
        MOVEMENTS,
        json.dumps(movement())[:-1].replace('"hawb_a1"', '"\\ud800"') + "}",
        "hawbId",
        id="refused-movement",
    ),
]


def _state(api: httpx.Client) -> tuple[object, object]:
    groups = api.get(GROUPS)
    movements = api.get("/_sandbox/movements")
    assert (groups.status_code, movements.status_code) == (200, 200)
    return groups.json(), movements.json()


@pytest.mark.parametrize(("method", "path", "text", "field"), REPROS)
def test_a_lone_surrogate_is_400_naming_the_field_and_nothing_is_stored(
    api: httpx.Client, method: str, path: str, text: str, field: str
) -> None:
    before = _state(api)
    headers = {**JSON, "Idempotency-Key": "surrogate"}
    for _ in range(2):  # the retry with the same key is answered the same
        response = api.request(method, path, content=text.encode(), headers=headers)
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["error"] == "Bad Request"
        [reason] = body["message"]
        assert reason.startswith(f"{field}: ")
        assert "\\ud" in reason and "surrogate" in reason
    assert _state(api) == before
    # The ids were not used up: the next group is number 2.
    created = api.post(GROUPS, json={"name": "Next", "code": "NEXT", "companyId": 1})
    assert created.json()["id"] == 2


def test_a_lone_surrogate_in_a_key_or_deep_inside_is_named(api: httpx.Client) -> None:
    text = '{"name":"n","code":"C","companyId":1,"DeclarationTemplates":[{"\\udfff":"x"}]}'
    response = api.post(GROUPS, content=text.encode(), headers=JSON)
    assert response.status_code == 400
    [reason] = response.json()["message"]
    assert reason.startswith("DeclarationTemplates[0]: a key ")


def test_a_surrogate_pair_and_an_escaped_backslash_are_text(api: httpx.Client) -> None:
    text = '{"name":"\\ud83d\\ude00 \\\\ud800","code":"PAIR","companyId":1}'
    response = api.post(GROUPS, content=text.encode(), headers=JSON)
    assert response.status_code == 201, response.text
    assert response.json()["name"] == "\U0001f600 \\ud800"


def test_nothing_reaches_the_database_and_a_restart_reads_fine(
    tmp_path: Path, make_api: ClientFactory
) -> None:
    database = tmp_path / "sandbox.sqlite3"
    first = make_api(db_path=database)
    text = '{"name":"\\udc00","code":"A16","companyId":1}'
    assert first.post(GROUPS, content=text.encode(), headers=JSON).status_code == 400
    first.close()
    again = make_api(db_path=database).get(GROUPS)
    assert again.status_code == 200
    assert [group["code"] for group in again.json()["result"]] == ["DEFAULT"]


def test_an_answer_holding_a_lone_surrogate_is_still_utf8_json() -> None:
    # Nothing stores one any more; an answer holding one (a database written by an older
    # emulator) shows the replacement character instead of failing.
    response = json_response({"name": "a\udc00b", "\ud800": 1})
    assert json.loads(bytes(response.body).decode("utf-8")) == {"name": "a\ufffdb", "\ufffd": 1}


def test_a_seed_with_a_surrogate_escape_is_refused_with_its_line() -> None:
    text = builtin_seed_text().replace("name: Default", 'name: "De\\udc00fault"', 1)
    line = text.splitlines().index(next(s for s in text.splitlines() if "De\\udc00" in s)) + 1
    with pytest.raises(ConfigError) as caught:
        parse_seed(text, "seed.yaml")
    message = str(caught.value)
    # libyaml, which reads seeds as it reads manifests, refuses the escape itself; PyYAML's
    # own parser took it, and the seed's check refused the value it made.
    assert f"seed.yaml:{line}: not valid YAML: while parsing a quoted scalar" in message
    assert f'found invalid Unicode character escape code\n  in "<unicode string>", line {line}' in (
        message
    )
    message.encode("utf-8")  # the error itself can be printed
