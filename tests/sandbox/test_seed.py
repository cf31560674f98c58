"""Seed files: the built-in seed, and clear errors for bad ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from stdnum import iso6346

from customs_batch.errors import ConfigError
from customs_batch.sandbox import builtin_seed, load_seed
from tests.sandbox.conftest import ClientFactory


def test_builtin_seed_is_the_documented_one() -> None:
    seed = builtin_seed()
    assert [(k.key, k.company_id, k.active) for k in seed.api_keys] == [
        ("sandbox-key", 1, True),
        ("inactive-key", 2, False),
    ]
    assert [s["publicId"] for s in seed.shipments] == ["shp_7Hk2Lm", "shp_9Xc4Rt", "shp_3Qw8Zn"]
    assert [d["declarationId"] for d in seed.declarations] == [501, 502, 601]
    assert [g["code"] for g in seed.template_groups] == ["DEFAULT"]
    assert [t["declarationId"] for t in seed.transit_declarations] == [7001, 7002]


def test_builtin_allocation_mrn_has_a_valid_check_digit() -> None:
    mrn = builtin_seed().shipments[0]["allocations"][0]["customsDeclarationNumber"]
    assert len(mrn) == 18
    assert iso6346.calc_check_digit(mrn[:17]) == mrn[17]


def test_seed_file_replaces_the_builtin_data(tmp_path: Path, make_api: ClientFactory) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(
        "apiKeys: [{key: my-key, companyId: 9}]\n"
        "shipments:\n"
        "  - {id: 1, publicId: shp_x1, referenceNumber: R1, status: new}\n",
        encoding="utf-8",
    )
    api = make_api(seed=load_seed(path), headers={"Authorization": "Bearer my-key"})
    assert [s["shipmentId"] for s in api.get("/v1/shipments").json()["result"]] == [1]
    assert (
        api.get("/v1/shipments", headers={"Authorization": "Bearer sandbox-key"}).status_code == 401
    )


def test_fields_a_seed_leaves_out_are_answered_in_their_documented_type(
    tmp_path: Path, make_api: ClientFactory
) -> None:
    """A seed's transit declaration written with its ID and status only was answered with
    procedureType, totalWeight, the offices... null (and null in the list's
    declarationType): the API document types them string and number, never "or null". An
    export declaration's items and parties left short are filled the same way."""
    path = tmp_path / "seed.yaml"
    path.write_text(
        "apiKeys: [{key: my-key, companyId: 1}]\n"
        "transitDeclarations: [{declarationId: 7001, status: ready}]\n"
        "declarations:\n"
        "  - {declarationId: 501, shipmentId: 1, type: EXPORT, status: ready,\n"
        "     referenceNumber: R1, items: [{id: 1, description: Bolts}]}\n",
        encoding="utf-8",
    )
    api = make_api(seed=load_seed(path), headers={"Authorization": "Bearer my-key"})
    transit = api.get("/v1/declarations/transit/7001").json()
    assert None not in transit.values(), transit
    assert transit["totalWeight"] == 0 and transit["weightUnit"] == "KGM"
    (entry,) = api.get("/v1/declarations/transit").json()["result"]
    assert None not in entry.values(), entry
    export = api.get("/v1/declarations/501").json()
    assert export["exporter"] == {"name": "", "eoriNo": ""}
    assert export["consignee"] == {"name": ""}
    (item,) = export["items"]
    assert set(item) == {
        "id",
        "description",
        "hsCode",
        "quantity",
        "grossMass",
        "netMass",
        "value",
        "currency",
        "originCountry",
    }
    assert None not in item.values()


def test_an_item_a_seed_lists_on_its_own_is_in_its_declarations_detail(
    tmp_path: Path, make_api: ClientFactory
) -> None:
    """Found probing: an item of ``declarationItems`` named its declaration (GET
    /v1/declaration-items/77 said so), but that declaration's detail listed no item."""
    path = tmp_path / "seed.yaml"
    path.write_text(
        "apiKeys: [{key: my-key, companyId: 1}]\n"
        "declarations:\n"
        "  - {declarationId: 5, shipmentId: 1, type: EXPORT, status: ready, referenceNumber: R}\n"
        "declarationItems:\n"
        "  - {id: 77, declarationId: 5, description: d, commodityCode: '731821'}\n"
        "  - {id: 79, declarationId: 5, description: gone, deleted: true}\n",
        encoding="utf-8",
    )
    api = make_api(seed=load_seed(path), headers={"Authorization": "Bearer my-key"})
    assert api.get("/v1/declaration-items/77").json()["declarationId"] == 5
    (item,) = api.get("/v1/declarations/5").json()["items"]
    assert (item["id"], item["description"], item["hsCode"]) == (77, "d", "731821")
    assert None not in item.values()


def test_seed_times_are_answered_with_milliseconds_and_ordered_as_times(
    tmp_path: Path, make_api: ClientFactory
) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(
        "apiKeys: [{key: my-key, companyId: 9}]\n"
        "shipments:\n"
        '  - {id: 1, publicId: shp_a, referenceNumber: R1, status: new, createdAt: "2026-01-05T08:00:00Z"}\n'
        '  - {id: 2, publicId: shp_b, referenceNumber: R2, status: new, createdAt: "2026-01-05T08:00:00.500Z"}\n'
        '  - {id: 3, publicId: shp_c, referenceNumber: R3, status: new, createdAt: "2026-01-05T08:00:00.1234567Z"}\n',
        encoding="utf-8",
    )
    api = make_api(seed=load_seed(path), headers={"Authorization": "Bearer my-key"})
    listed = api.get("/v1/shipments", params={"order": "asc"}).json()["result"]
    assert [(s["shipmentId"], s["createdAt"]) for s in listed] == [
        (1, "2026-01-05T08:00:00.000Z"),
        (3, "2026-01-05T08:00:00.123Z"),
        (2, "2026-01-05T08:00:00.500Z"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "shipments:\n  - id: 1\n    publicId: bad\n",
            [
                "seed.yaml:3: at shipments[0].publicId",
                "seed.yaml:2: at shipments[0]: 'referenceNumber' is a required",
            ],
        ),
        (
            "apiKeys:\n  - {key: a, companyId: 1}\n  - {key: a, companyId: 2}\n",
            ["seed.yaml:3: at apiKeys[1].key: duplicate 'a'"],
        ),
        ("colour: red\n", ["Additional properties are not allowed ('colour'"]),
        (
            "transitDeclarations:\n"
            '  - {declarationId: 1, status: ready, createdAt: "2026-02-30T25:61:99Z"}\n',
            ["seed.yaml:2: at transitDeclarations[0].createdAt: 2026-02-30T25:61:99Z is no date"],
        ),
        (
            "shipments:\n"
            "  - {id: 1, publicId: shp_A, referenceNumber: R1, status: new,\n"
            "     hawbs: [{hawbId: hawb_1, houseAirWaybillNumber: '1', packageCount: 1, "
            "grossWeightKg: 1}]}\n"
            "  - {id: 2, publicId: shp_A, referenceNumber: R2, status: new,\n"
            "     hawbs: [{hawbId: hawb_1, houseAirWaybillNumber: '2', packageCount: 1, "
            "grossWeightKg: 1}]}\n"
            "templateGroups:\n"
            "  - {id: 1, name: A, code: SAME, companyId: 1}\n"
            "  - {id: 2, name: B, code: SAME, companyId: 2}\n"
            "  - {id: 3, name: C, code: SAME, companyId: 1}\n",
            [
                "seed.yaml:4: at shipments[1].publicId: duplicate 'shp_A' (first at "
                "shipments[0].publicId)",
                "seed.yaml:5: at shipments[1].hawbs[0].hawbId: duplicate 'hawb_1' (first at "
                "shipments[0].hawbs[0].hawbId)",
                "seed.yaml:9: at templateGroups[2].code: duplicate 'SAME' (first at "
                "templateGroups[0].code)",
            ],
        ),
        (
            "apiKeys:\n  - key: k1\n    companyId: 1\n    companyId: 2\n",
            ["seed.yaml:4: duplicate key 'companyId' (first at line 3)"],
        ),
        ("apiKeys: []\napiKeys: []\n", ["seed.yaml:2: duplicate key 'apiKeys' (first at line 1)"]),
        (
            "apiKeys:\n  - {key: k1, companyId: 1}\nshipments:\n  - {id: 1, publicId: shp_A, "
            "referenceNumber: R1, status: new, createdAt: 2026-01-05T08:00:00Z}\n",
            [
                "seed.yaml:4: at shipments[0].createdAt: 2026-01-05T08:00:00Z is read by YAML "
                "as a date, not text: quote it, '2026-01-05T08:00:00Z'"
            ],
        ),
        ("- just a list\n", ["seed.yaml:1: ['just a list'] is not of type 'object'"]),
        ("apiKeys: [\n", ["seed.yaml:2: not valid YAML"]),
    ],
)
def test_bad_seed_names_file_line_and_problem(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_seed(path)
    message = str(caught.value).replace(str(tmp_path) + "/", "")
    for fragment in expected:
        assert fragment in message


def test_missing_seed_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the seed file"):
        load_seed(tmp_path / "absent.yaml")


def test_empty_seed_file_gives_an_empty_emulator(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text("", encoding="utf-8")
    assert load_seed(path).api_keys == ()


@pytest.mark.parametrize("status", ["SUBMITTED", "Ready", "sent"])
def test_a_seed_declaration_in_a_status_the_api_does_not_list_is_refused(
    tmp_path: Path, status: str
) -> None:
    """An import/export status other than the API document's lower-case words was taken:
    the list's status filter never found it (status=submitted missed SUBMITTED) and DELETE
    asked customs to cancel a 'Ready' declaration instead of cancelling it at once."""
    path = tmp_path / "seed.yaml"
    path.write_text(
        "declarations:\n"
        f"  - {{declarationId: 501, shipmentId: 1, type: EXPORT, status: {status},\n"
        "     referenceNumber: R}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_seed(path)
    assert f"seed.yaml:2: at declarations[0].status: '{status}' is not one of" in str(
        caught.value
    ).replace(str(tmp_path) + "/", "")


def test_a_seed_nesting_thousands_of_levels_is_refused_naming_it(tmp_path: Path) -> None:
    # `sandbox serve --seed` said "internal error: RecursionError".
    seed = tmp_path / "deep.yaml"
    seed.write_text("companies: []\nshipments: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match=r"deep.yaml:2: the seed's records nest more than 100"):
        load_seed(seed)


def test_a_seed_whose_aliases_stand_for_millions_of_values_is_refused(tmp_path: Path) -> None:
    # Nested aliases: nine levels (a billion values) ran for ever; six are enough here.
    lines = ['  a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    seed = tmp_path / "laughs.yaml"
    seed.write_text("junk:\n" + "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"laughs.yaml:\d+: the seed's records hold more than"):
        load_seed(seed)


def test_a_seed_writing_out_more_values_than_the_alias_bound_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bound on aliases counted every value: a seed of 6,000 transit declarations written
    # out one a line (19 values each, no alias) was refused as "more than 100,000 values"
    # (`sandbox serve --seed`, exit 3). Here the bound is 100 and the seed writes out 190.
    monkeypatch.setattr("customs_batch.yaml_bounds.MAX_VALUES", 100)
    lines = [
        f"  - {{declarationId: {7100 + n}, status: ready, procedureType: D1, "
        "declarationType: externalTransit, totalWeight: 1200.0, weightUnit: KGM, "
        'departureOffice: NL000396, destinationOffice: DE004073, createdAt: "2026-01-08T08:00:00.000Z"}'
        for n in range(10)
    ]
    seed = tmp_path / "many.yaml"
    seed.write_text("transitDeclarations:\n" + "\n".join(lines) + "\n")
    assert len(load_seed(seed).transit_declarations) == 10
    # What aliases stand for beyond the values written out is still bounded.
    seed.write_text(
        'junk:\n  a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]\n'
        "  a1: &a1 [" + ",".join(["*a0"] * 10) + "]\n"
        "  a2: [" + ",".join(["*a1"] * 10) + "]\n"
    )
    with pytest.raises(ConfigError, match=r"many.yaml:\d+: the seed's records hold more than 100 "):
        load_seed(seed)


def test_a_seed_that_is_no_regular_file_or_not_utf_8_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    # Found probing: `sandbox serve --seed FIFO` waited for a writer for ever, `--seed
    # /dev/zero` read until memory ran out, and a byte not UTF-8 was "internal error".
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    with pytest.raises(ConfigError, match="not a regular file \\(it is a named pipe\\)"):
        load_seed(pipe)
    with pytest.raises(ConfigError, match="not a regular file \\(it is a character device\\)"):
        load_seed(Path("/dev/zero"))
    path = tmp_path / "seed.yaml"
    path.write_bytes(b"shipments: []\n# \xff\n")
    with pytest.raises(ConfigError) as caught:
        load_seed(path)
    assert caught.value.message == f"{path}:2:3: byte 0xff is not UTF-8 text"


def test_a_seed_with_a_line_over_the_line_bound_is_refused_before_yaml_reads_it(
    tmp_path: Path,
) -> None:
    """Found probing: `sandbox serve --seed` of one 100 MB comment line read it three times
    with PyYAML's own parser (minutes) before starting. A line over the manifests' bound
    (1 MB) is refused at that line, unread: the broken YAML below it is not reported."""
    seed = tmp_path / "seed.yaml"
    seed.write_text("companies: []\n# " + "x" * (1024 * 1024) + "\nshipments: [\n")
    with pytest.raises(ConfigError) as caught:
        load_seed(seed)
    assert (
        caught.value.message
        == f"{seed}:2: line 2 is longer than 1.0 MB; the file is not read further"
    )
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in str(caught.value.hint)


def test_a_seed_is_parsed_by_libyaml_where_pyyaml_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML's own scanner takes about a second a megabyte: a seed of 100 MB of line
    breaks (no long line) was read for minutes. libyaml, which reads manifests, reads it in
    a hundredth of that. Every pass over the seed (its depth, its values, its records) is
    libyaml's: PyYAML's own parser is made to fail here."""
    import yaml
    from yaml.parser import Parser

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("the seed was read by PyYAML's own parser")

    monkeypatch.setattr(Parser, "__init__", refused)
    seed = tmp_path / "seed.yaml"
    seed.write_text("apiKeys: [{key: my-key, companyId: 9}]\n")
    assert [key.key for key in load_seed(seed).api_keys] == ["my-key"]
