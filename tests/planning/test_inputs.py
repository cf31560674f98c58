"""What a plan starts from: documents checked as they load, findings at the exact value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from customs_batch.load_cache import CACHE_DIR_VARIABLE
from customs_batch.planning.inputs import load_inputs
from tests.validation.samples import MOVEMENT_YAML


def _write(folder: Path, *documents: str) -> Path:
    (folder / "customs-batch.yaml").write_text("default_environment: local\n")
    manifests = folder / "manifests"
    manifests.mkdir()
    (manifests / "movements.yaml").write_text("---\n".join(documents))
    return manifests


def test_documents_from_several_files_keep_batch_order_and_specs(tmp_path: Path) -> None:
    manifests = _write(
        tmp_path,
        MOVEMENT_YAML.format(name="mov-1", hawb="hawb_1", quantity=1),
        MOVEMENT_YAML.format(name="mov-2", hawb="hawb_2", quantity=2),
    )
    (manifests / "more.yaml").write_text(
        MOVEMENT_YAML.format(name="mov-3", hawb="hawb_3", quantity=3)
    )
    inputs = load_inputs([manifests])
    assert not inputs.failed
    names = [(doc.name, doc.index) for doc in inputs.documents]
    assert sorted(names, key=lambda pair: pair[1]) == names
    assert {doc.name for doc in inputs.documents} == {"mov-1", "mov-2", "mov-3"}
    assert [doc.index for doc in inputs.documents] == sorted(
        {doc.index for doc in inputs.documents}
    )
    assert inputs.documents[0].spec["customsDeclaration"]["declarationType"] == "IM"


def test_a_schema_error_points_at_the_value_itself(tmp_path: Path) -> None:
    manifests = _write(
        tmp_path,
        MOVEMENT_YAML.format(name="mov-1", hawb="hawb_1", quantity=1),
        MOVEMENT_YAML.format(name="mov-2", hawb="hawb_2", quantity="many"),
    )
    inputs = load_inputs([manifests])
    assert inputs.failed
    [finding] = [f for f in inputs.validation.findings if f.location.path[-1:] == ("quantity",)]
    # The second document starts on line 20, after "---"; its quantity is its ninth line.
    assert (finding.location.line, finding.location.column) == (28, 13)


def test_a_project_wide_error_points_at_the_second_document(tmp_path: Path) -> None:
    manifests = _write(
        tmp_path,
        MOVEMENT_YAML.format(name="mov-1", hawb="hawb_1", quantity=1),
        MOVEMENT_YAML.format(name="mov-1", hawb="hawb_2", quantity=2),
    )
    inputs = load_inputs([manifests])
    assert inputs.failed
    [finding] = [f for f in inputs.validation.findings if "mov-1" in f.message]
    assert finding.location.line >= 20


def test_a_project_wide_warning_leaves_the_batch_planable(tmp_path: Path) -> None:
    manifests = _write(
        tmp_path,
        MOVEMENT_YAML.format(name="mov-1", hawb="hawb_1", quantity=1),
        MOVEMENT_YAML.format(name="mov-2", hawb="hawb_1", quantity=1),
    )
    inputs = load_inputs([manifests])
    assert not inputs.failed
    [warning] = [f for f in inputs.validation.findings if "same request" in f.message]
    assert warning.location.file.endswith("movements.yaml")
    assert [doc.name for doc in inputs.documents] == ["mov-1", "mov-2"]


ROWS_MANIFEST = """\
apiVersion: customs-batch/v1
kind: Movement
forEach: {file: rows.csv}
metadata:
  name: "mov-{{ row_number }}"
spec:
  shipmentId: "{{ row.Shipment }}"
  hawbId: "{{ row.HAWB }}"
  action: "{{ row.Action }}"
  quantity: "{{ row.Packages }}"
  grossWeightKg: 12.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: "{{ row.Party }}"
"""


def _write_rows(folder: Path, rows: int) -> None:
    """``rows.csv`` for ROWS_MANIFEST: ``rows`` rows, each on its own HAWB."""
    lines = ["Shipment;HAWB;Action;Packages;Party"]
    lines += [f"shp_{n % 97:05d};hawb_{n:07d};ISL;{1 + n % 40};rpty_{n % 13}" for n in range(rows)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _bytes_kept_by_plan_inputs(folder: Path, rows: int) -> int:
    """Bytes still allocated once a ``rows``-row forEach is loaded for a plan."""
    import tracemalloc

    _write_rows(folder, rows)
    tracemalloc.start()
    try:
        inputs = load_inputs([folder / "rows.yaml"])
        assert len(inputs.documents) == rows
        assert not inputs.failed
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_a_planned_spreadsheet_row_keeps_little_memory(tmp_path: Path) -> None:
    # A plan keeps every row's document: texts a column repeats (shipment, party, action)
    # are one string for all rows, and the document is slotted (about 1,265 bytes a row
    # before, 850 after). Allocations are counted, not timed: the same on every machine.
    (tmp_path / "rows.yaml").write_text(ROWS_MANIFEST, encoding="utf-8")
    _bytes_kept_by_plan_inputs(tmp_path, 10)  # caches filled once: schemas, templates
    small = _bytes_kept_by_plan_inputs(tmp_path, 1_000)
    big = _bytes_kept_by_plan_inputs(tmp_path, 3_000)
    per_row = (big - small) / 2_000
    assert per_row < 1_000, f"{per_row:.0f} bytes kept per row"


def _bytes_kept_by_yaml_inputs(folder: Path, count: int) -> int:
    """Bytes still allocated once ``count`` movement manifests are loaded for a plan."""
    import tracemalloc

    documents = [
        "apiVersion: customs-batch/v1\nkind: Movement\n"
        f"metadata: {{name: mov-{n}}}\n"
        f"spec: {{shipmentId: shp_{n % 97:05d}, hawbId: hawb_{n:07d}, action: ISL,"
        f" quantity: {1 + n % 40}, grossWeightKg: 12.5, customsSupervision: Y,"
        f" goodsHandlingCode: N, partyId: rpty_{n % 13}}}\n"
        for n in range(count)
    ]
    (folder / "movements.yaml").write_text("---\n".join(documents), encoding="utf-8")
    tracemalloc.start()
    try:
        inputs = load_inputs([folder / "movements.yaml"])
        assert len(inputs.documents) == count
        assert not inputs.failed
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_a_planned_manifest_keeps_one_string_per_repeated_text(tmp_path: Path) -> None:
    # A re-plan keeps every document: the texts documents repeat (shipment, party, action)
    # are one string for all, no document holds empty dicts of its own for labels and
    # values, documents are slotted (1,446 bytes a document before, 865 after). Counted
    # allocations, not timed: the same on every machine.
    _bytes_kept_by_yaml_inputs(tmp_path, 10)  # caches filled once: schemas
    small = _bytes_kept_by_yaml_inputs(tmp_path, 500)
    big = _bytes_kept_by_yaml_inputs(tmp_path, 1_500)
    per_document = (big - small) / 1_000
    assert per_document < 1_100, f"{per_document:.0f} bytes kept per document"


def test_a_pool_of_processes_loads_the_same_documents_in_the_same_order(tmp_path: Path) -> None:
    manifests = _write(tmp_path, MOVEMENT_YAML.format(name="mov-0", hawb="hawb_0", quantity=1))
    for number in range(1, 12):
        (manifests / f"more-{number:02d}.yaml").write_text(
            "---\n".join(
                MOVEMENT_YAML.format(
                    name=f"mov-{number}-{n}", hawb=f"hawb_{number}_{n}", quantity=n
                )
                for n in range(1, 4)
            )
        )
    (manifests / "more-05.yaml").write_text(
        MOVEMENT_YAML.format(name="mov-bad", hawb="hawb_bad", quantity="-1")
    )
    alone = load_inputs([manifests], jobs=1)
    pooled = load_inputs([manifests], jobs=2)
    assert pooled.validation == alone.validation
    assert [f.rule for f in pooled.validation.findings]  # the bad quantity, found by a worker
    assert [(doc.address, doc.spec, doc.index) for doc in pooled.documents] == [
        (doc.address, doc.spec, doc.index) for doc in alone.documents
    ]
    order = [doc.index for doc in pooled.documents]
    assert order == sorted(order)
    assert [doc.name for doc in pooled.documents][:2] == ["mov-1-1", "mov-1-2"]  # file order


def test_a_file_s_repeated_texts_stay_shared_from_a_loading_process_and_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shared where the file is loaded: pickle keeps one copy of a shared object, so the
    # documents come back from a loading process, and from the load cache, still sharing.
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    manifests = _write(
        tmp_path,
        *(
            MOVEMENT_YAML.format(name=f"mov-{n}", hawb=f"hawb_{n}", quantity=n + 1)
            for n in range(3)
        ),
    )
    for number in range(4):  # enough files for a pool of loading processes
        (manifests / f"more-{number}.yaml").write_text(
            MOVEMENT_YAML.format(name=f"more-{number}", hawb=f"hawb_9{number}", quantity=1)
        )
    for run in ("loaded", "cached"):
        inputs = load_inputs([manifests], jobs=2, cache=True)
        first, second, third = (doc.spec for doc in inputs.documents if doc.name.startswith("mov-"))
        assert not inputs.failed
        assert first["shipmentId"] is second["shipmentId"] is third["shipmentId"], run
        assert first["partyId"] is third["partyId"], run
        assert first["hawbId"] != second["hawbId"]
        # Small files (10,000 manifests of one document each) share across files too.
        lone = [doc.spec for doc in inputs.documents if doc.name.startswith("more-")]
        assert len(lone) == 4
        assert all(spec["shipmentId"] is lone[0]["shipmentId"] for spec in lone), run


def test_a_folder_that_cannot_be_listed_fails_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its documents would be missing: a plan would take their records for ones to delete.
    manifests = _write(tmp_path, MOVEMENT_YAML.format(name="mov-1", hawb="hawb_1", quantity=1))
    (manifests / "locked").mkdir()
    real = os.scandir

    def scandir(path: str) -> object:
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    inputs = load_inputs([manifests])
    assert inputs.failed
    [finding] = inputs.validation.findings
    assert finding.rule == "file.unreadable"
    assert finding.location.file == str(manifests / "locked")


def _peak_bytes_of_planning(folder: Path, rows: int) -> tuple[int, int]:
    """Over the memory of ``rows`` loaded rows, each on its own HAWB: the most the graph
    allocates on top of it while it runs, and the most the plan held beyond what it keeps."""
    import tracemalloc

    from customs_batch.planning.diff import plan_changes
    from customs_batch.planning.graph import dependency_edges
    from customs_batch.state.model import State

    _write_rows(folder, rows)
    documents = load_inputs([folder / "rows.yaml"]).documents
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        edges = dependency_edges(documents)
        graph = tracemalloc.get_traced_memory()[1] - before
        assert not edges  # no HAWB has two rows
        tracemalloc.reset_peak()
        plan = plan_changes(documents, State(lineage="", serial=0), consume=True, edges=edges)
        # Over what the plan keeps once made (its changes): what it held only while made.
        current, peak = tracemalloc.get_traced_memory()
        assert len(plan.changes) == rows
        return graph, peak - current
    finally:
        tracemalloc.stop()


def test_a_bulk_load_of_rows_on_their_own_lanes_is_planned_without_a_table_of_lanes(
    tmp_path: Path,
) -> None:
    # A bulk load of 100,000 movements, each on its own HAWB, held a table of every lane
    # while its graph was walked (179 bytes a row over the documents, the top of the plan's
    # memory; 78 now), and while it was planned a count of every lane and an entry of every
    # document waiting for nothing (142 bytes a row beyond what the plan keeps; none now).
    # Only lanes two rows share are kept now. Allocations are counted, not timed.
    (tmp_path / "rows.yaml").write_text(ROWS_MANIFEST, encoding="utf-8")
    _peak_bytes_of_planning(tmp_path, 10)  # caches filled once: schemas, templates
    small = _peak_bytes_of_planning(tmp_path, 1_000)
    big = _peak_bytes_of_planning(tmp_path, 3_000)
    graph, planning = ((b - s) / 2_000 for s, b in zip(small, big, strict=True))
    assert graph < 120, f"{graph:.0f} bytes a row at the top of the graph's walk"
    assert planning < 60, f"{planning:.0f} bytes a row held while the plan was made"


def _peak_bytes_of_project_checks(folder: Path, rows: int) -> int:
    """Over the memory of ``rows`` loaded rows: the most the project-wide checks allocate."""
    import tracemalloc

    from customs_batch.validation.project import check_project

    _write_rows(folder, rows)
    documents = load_inputs([folder / "rows.yaml"]).documents
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert not check_project(documents)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_the_project_checks_of_a_bulk_load_hold_no_table_of_every_row(tmp_path: Path) -> None:
    # The check for two rows sending the same request held a table of every row's
    # fingerprint (175 bytes a row in all at the top of these checks, the top of a bulk
    # load's memory while it was loaded); it is built a part of the fingerprints at a time
    # now (100 bytes a row, most of it the table of addresses the checks share).
    (tmp_path / "rows.yaml").write_text(ROWS_MANIFEST, encoding="utf-8")
    _peak_bytes_of_project_checks(tmp_path, 10)  # caches filled once: schemas, templates
    small = _peak_bytes_of_project_checks(tmp_path, 1_000)
    big = _peak_bytes_of_project_checks(tmp_path, 3_000)
    per_row = (big - small) / 2_000
    assert per_row < 130, f"{per_row:.0f} bytes a row at the top of the project checks"


def test_the_load_of_a_file_without_documents_read_back_is_small(tmp_path: Path) -> None:
    # plan of 200,000 empty manifests held each file's load with a dict of attributes and
    # an empty set of addresses of its own (216 bytes) once read back from a loading process
    # or the load cache.
    import pickle

    from customs_batch.findings import Severity
    from customs_batch.planning import inputs

    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    sent = pickle.dumps(inputs._load_file((0, str(empty)), inputs._Settings(Severity.ERROR)))
    first, second = pickle.loads(sent), pickle.loads(sent)
    assert first.documents == [] and not hasattr(first, "__dict__")
    assert first.project.broken is second.project.broken
