"""`customs-batch schema export`: the kind schemas and one schema editors use for documents."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.kinds import Kind
from customs_batch.resources import load_schema
from tests.cli.conftest import run_alone

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI through click's runner and the real entry point's error handler."""
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture
def document_validator() -> jsonschema.Draft202012Validator:
    assert _cli("schema", "export", "out")[0] == 0
    schema = json.loads(Path("out/document.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _messages(validator: jsonschema.Draft202012Validator, document: Any) -> list[str]:
    return [error.message for error in validator.iter_errors(document)]


def test_export_writes_every_schema_into_a_new_folder() -> None:
    code, out, _ = _cli("schema", "export", "deep/schemas")
    assert code == 0
    names = {path.name for path in Path("deep/schemas").iterdir()}
    expected = {"envelope.schema.json", "document.schema.json"}
    expected |= {f"{kind.schema_name}.schema.json" for kind in Kind}
    assert names == expected
    assert len(out.splitlines()) == len(expected)
    # The schemas as loaded: the lists of kinds filled in from the registry.
    for name in ["envelope", *(kind.schema_name for kind in Kind)]:
        exported = json.loads(Path(f"deep/schemas/{name}.schema.json").read_text("utf-8"))
        assert exported == load_schema(name)
    envelope = json.loads(Path("deep/schemas/envelope.schema.json").read_text("utf-8"))
    assert envelope["properties"]["kind"]["enum"] == [kind.value for kind in Kind]


def test_a_folder_with_a_newline_in_its_name_is_listed_one_file_a_line() -> None:
    # Each path printed broke over two lines: "out" and "dir/envelope.schema.json".
    code, out, _ = _cli("schema", "export", "out\ndir")
    assert code == 0
    lines = out.splitlines()
    assert lines and all(line.startswith("out\\ndir/") for line in lines), out


def test_the_document_schema_accepts_every_example_document(
    document_validator: jsonschema.Draft202012Validator,
) -> None:
    for manifest in sorted((EXAMPLES / "manifests").glob("*.yaml")):
        for document in yaml.safe_load_all(manifest.read_text(encoding="utf-8")):
            assert _messages(document_validator, document) == [], manifest.name


def test_the_document_schema_checks_the_spec_by_kind(
    document_validator: jsonschema.Draft202012Validator,
) -> None:
    document = {
        "apiVersion": "customs-batch/v1",
        "kind": "HawbDeactivation",
        "metadata": {"name": "h"},
        "spec": {"shipmentId": "shp_1", "hawbId": "HAWB-1"},
    }
    assert any("HAWB-1" in message for message in _messages(document_validator, document))
    document["kind"] = "Movement"
    assert any("'action' is a required" in m for m in _messages(document_validator, document))


def test_a_templated_document_is_not_asked_for_what_the_template_gives(
    document_validator: jsonschema.Draft202012Validator,
) -> None:
    document: dict[str, Any] = {
        "apiVersion": "customs-batch/v1",
        "kind": "DepartureDeclaration",
        "metadata": {"name": "d"},
        "template": "t1-road",
        "spec": {"commercialReference": "X"},
    }
    assert _messages(document_validator, document) == []
    document["spec"]["totalWeight"] = "heavy"
    assert _messages(document_validator, document) == ["'heavy' is not of type 'number'"]


def test_an_unknown_top_level_key_is_flagged(
    document_validator: jsonschema.Draft202012Validator,
) -> None:
    document = {"apiVersion": "customs-batch/v1", "kind": "Movement", "metadata": {"name": "m"}}
    document["specs"] = {}
    assert any("'specs' was unexpected" in m for m in _messages(document_validator, document))


def test_export_to_a_file_path_is_a_usage_error() -> None:
    Path("taken").write_text("x", encoding="utf-8")
    assert _cli("schema", "export", "taken")[0] == 64


def test_a_named_pipe_in_place_of_a_schema_is_refused_not_waited_on() -> None:
    Path("schemas").mkdir()
    os.mkfifo("schemas/document.schema.json")
    # In a process of its own: writing to the pipe would wait for a reader for ever.
    done = run_alone("schema", "export", "schemas")
    assert done.returncode not in (0, 2), done.stderr
    assert "schemas/document.schema.json: a named pipe is there, not a file" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_shows_the_modeline_example() -> None:
    code, out, _ = _cli("schema", "export", "--help")
    assert code == 0
    assert "# yaml-language-server: $schema=" in out


def test_schema_export_never_writes_over_customs_batch_s_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    state = tmp_path / ".customs-batch" / "local" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"state": "kept"}\n', encoding="utf-8")
    code = invoke(["schema", "export", ".customs-batch/local"])
    assert code == 64
    assert sorted(p.name for p in state.parent.iterdir()) == ["state.json"]
    code = invoke(["schema", "export", ".customs-batch/new"])
    assert code == 64 and not (tmp_path / ".customs-batch" / "new").exists()
    # A link in the folder named is replaced by the schema, never written through.
    (tmp_path / "sch").mkdir()
    (tmp_path / "sch" / "movement.schema.json").symlink_to(state)
    assert invoke(["schema", "export", "sch"]) == 0
    assert state.read_text(encoding="utf-8") == '{"state": "kept"}\n'
    assert not (tmp_path / "sch" / "movement.schema.json").is_symlink()
