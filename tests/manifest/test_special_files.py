"""Pipes, devices, link loops and oversized files among the manifests and templates: each is
a finding naming the file, and the other files are still loaded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from customs_batch.manifest import load_file, load_paths
from customs_batch.userfiles import MAX_FILE_MB_VARIABLE, MEGABYTE
from tests.manifest.helpers import ENVELOPE, movement, only, write
from tests.test_userfiles import within_seconds

GOOD = movement(
    "  shipmentId: shp_7Hk2Lm\n  action: VAH\n  quantity: 1\n  grossWeightKg: 1\n"
    "  customsSupervision: Y\n  goodsHandlingCode: N\n  partyId: rpty_p1\n"
)


def test_a_named_pipe_in_the_folder_is_a_finding_and_the_rest_still_loads() -> None:
    write(Path("m/good.yaml"), GOOD)
    os.mkfifo("m/pipe.yaml")
    result = within_seconds(lambda: load_paths([Path("m")]))
    finding = only(result, "file.not-regular")
    assert finding.location.file == os.path.join("m", "pipe.yaml")
    assert "named pipe" in finding.message
    assert [str(doc.address) for doc in result.documents] == ["Movement/mov-1"]


def test_links_to_devices_are_findings_not_endless_reads() -> None:
    Path("m").mkdir()
    Path("m/zero.yaml").symlink_to("/dev/zero")
    Path("m/random.yml").symlink_to("/dev/urandom")
    result = within_seconds(lambda: load_paths([Path("m")]))
    files = sorted(f.location.file for f in result.findings if f.rule == "file.not-regular")
    assert files == [os.path.join("m", "random.yml"), os.path.join("m", "zero.yaml")]


def test_a_symbolic_link_loop_among_the_manifests_is_a_finding_for_each_link() -> None:
    write(Path("m/good.yaml"), GOOD)
    Path("m/a.yaml").symlink_to("b.yaml")
    Path("m/b.yaml").symlink_to("a.yaml")
    result = load_paths([Path("m")])
    loops = [f for f in result.findings if f.rule == "file.symlink-loop"]
    assert [f.location.file for f in loops] == [os.path.join("m", n) for n in ("a.yaml", "b.yaml")]
    assert len(result.documents) == 1


def test_a_manifest_over_the_size_limit_is_refused_with_how_to_raise_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write(Path("big.yaml"), GOOD + "#" * MEGABYTE + "\n")
    monkeypatch.setenv(MAX_FILE_MB_VARIABLE, "1")
    finding = only(load_file(path), "file.too-large")
    assert MAX_FILE_MB_VARIABLE in finding.hint
    monkeypatch.setenv(MAX_FILE_MB_VARIABLE, "2")
    assert len(load_file(path).documents) == 1


def test_a_template_that_is_a_named_pipe_is_an_error_naming_it() -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    Path("templates").mkdir()
    os.mkfifo("templates/t.yaml.j2")
    path = write(
        Path("d.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t\n"
        "spec:\n  commercialReference: R-1\n",
    )
    result = within_seconds(lambda: load_file(path))
    finding = only(result, "template.error")
    assert "t.yaml.j2" in finding.message and "named pipe" in finding.message


def test_a_file_that_runs_out_of_memory_is_a_finding_and_the_others_still_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from customs_batch.manifest import _load

    write(Path("m/a-good.yaml"), GOOD)
    write(Path("m/b-huge.yaml"), GOOD.replace("mov-1", "mov-2"))
    real = _load._document

    def document(node: Any, walk: Any, *args: Any) -> Any:
        if walk.file.endswith("b-huge.yaml"):
            raise MemoryError  # as millions of values on one line do under a memory limit
        return real(node, walk, *args)

    monkeypatch.setattr(_load, "_document", document)
    result = load_paths([Path("m")])
    finding = only(result, "file.out-of-memory")
    assert finding.location.file == os.path.join("m", "b-huge.yaml")
    assert "ran out of memory loading this file" in finding.message
    assert "Run again with more memory" in finding.hint
    assert [str(doc.address) for doc in result.documents] == ["Movement/mov-1"]


def test_a_template_with_a_line_over_the_line_bound_is_refused_before_jinja_reads_it() -> None:
    """Found probing: a template of one 100 MB line was compiled and rendered (12 s,
    0.8 GB) before its output was refused. A line over the manifests' bound (1 MB) is
    refused at that line, unread: the Jinja syntax error below it is not reported."""
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t.yaml.j2"), "spec:\n  # " + "x" * MEGABYTE + "\n  {% if %}\n")
    path = write(
        Path("d.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t\n"
        "spec:\n  commercialReference: R-1\n",
    )
    finding = only(load_file(path), "template.error")
    assert os.path.join("templates", "t.yaml.j2:2: line 2 is longer than 1.0 MB") in finding.message
    assert "syntax" not in finding.message
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in finding.message + finding.hint


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("spec:\n" + "\n" * 200_000 + "  {% if %}\n", "the template has more than 200,000 lines"),
        ("spec:\n" + "\r" * 200_000 + "  {% if %}\n", "the template has more than 200,000 lines"),
        ("spec:\n" + ("  # " + "x" * 1000 + "\n") * 10_500, "the file is larger than 10 MB"),
    ],
)
def test_a_template_of_too_many_lines_or_bytes_is_refused_before_jinja_reads_it(
    text: str, said: str
) -> None:
    """Found probing: a template of 100 MB of line breaks ran the machine out of memory
    (24 GB, killed) while Jinja compiled it, every line marked with its place. A template
    holds one document's text: over 200,000 lines or 10 MB it is refused unread (the Jinja
    syntax error at its end is not reported)."""
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t.yaml.j2"), text)
    path = write(
        Path("d.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t\n"
        "spec:\n  commercialReference: R-1\n",
    )
    finding = only(load_file(path), "template.error")
    assert said in finding.message
    assert "a template holds the text of one document" in finding.message
    assert "syntax" not in finding.message
