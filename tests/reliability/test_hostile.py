"""The hostile-input corpus: each case through the real command line within 30 seconds and
1 GiB of address space, ending in a finding or a clear error, never a hang, a crash, a
traceback or an "internal error". Peak memory and time of each are recorded."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.manifest.helpers import SHEET_HEADERS, cycle_manifest, movement_sheet_manifest, write
from tests.manifest.spreadsheet.hostile_xlsx import (
    far_corner_sheet,
    missing_shared_string_sheet,
    write_bomb,
    write_shared_strings_bomb,
    write_with_shared_strings,
    write_xlsx,
)
from tests.reliability.limits import run_bounded

pytestmark = pytest.mark.reliability

SECONDS = 30
ENVELOPE = "apiVersion: customs-batch/v1\n"


@dataclass(frozen=True)
class Case:
    """A hostile input: what it writes (returning the command's arguments), the exit codes
    accepted and a text the report must hold."""

    make: Callable[[Path], list[str]]
    codes: tuple[int, ...]
    expect: str
    json_output: bool = False
    """Whether stdout must be one JSON document, valid UTF-8."""


def _departure(value: str) -> str:
    return f'{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\nspec:\n  commercialReference: "{value}"\n'


def _jinja(expression: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        write(folder / "m.yaml", _departure(expression))
        return ["validate", "m.yaml"]

    return make


def _far_corner(folder: Path) -> list[str]:
    write_xlsx(folder / "far.xlsx", far_corner_sheet())
    write(folder / "m.yaml", movement_sheet_manifest("far.xlsx"))
    return ["validate", "m.yaml"]


def _zip_bomb(folder: Path) -> list[str]:
    write_bomb(folder / "bomb.xlsx", 520, SHEET_HEADERS)
    write(folder / "m.yaml", movement_sheet_manifest("bomb.xlsx"))
    return ["validate", "m.yaml"]


def _fifo(folder: Path) -> list[str]:
    (folder / "manifests").mkdir()
    os.mkfifo(folder / "manifests" / "pipe.yaml")
    return ["plan", "manifests"]


def _link_to(target: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        (folder / "manifests").mkdir()
        (folder / "manifests" / "m.yaml").symlink_to(target)
        return ["validate", "manifests"]

    return make


def _link_loop(folder: Path) -> list[str]:
    (folder / "manifests").mkdir()
    (folder / "manifests" / "a.yaml").symlink_to("b.yaml")
    (folder / "manifests" / "b.yaml").symlink_to("a.yaml")
    return ["validate", "manifests"]


def _state_to_dev_zero(folder: Path) -> list[str]:
    write(folder / "customs-batch.yaml", "default_environment: local\n")
    cancellation = "kind: ExportCancellation\nmetadata: {name: c}\nspec: {declarationId: 501}\n"
    write(folder / "manifests" / "m.yaml", ENVELOPE + cancellation)
    (folder / ".customs-batch" / "local").mkdir(parents=True)
    (folder / ".customs-batch" / "local" / "state.json").symlink_to("/dev/zero")
    return ["plan", "manifests"]


def _one_line(folder: Path) -> list[str]:
    with (folder / "m.yaml").open("w") as out:
        out.write(f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\n")
        out.write("spec: {shipmentId: shp_7Hk2Lm, hawbId: ")
        for _ in range(200):
            out.write("h" * 1_000_000)
        out.write("}\n")
    return ["validate", "m.yaml"]


def _block(folder: Path) -> list[str]:
    with (folder / "m.yaml").open("w") as out:
        out.write(f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\nspec:\n")
        out.write("  commercialReference: |\n")
        lines = ("    " + "x" * 76 + "\n") * 10_000
        for _ in range(250):  # 200 MB over 2.5 million lines of 80 bytes
            out.write(lines)
    return ["validate", "m.yaml"]


def _flow(opening: str, closing: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        with (folder / "m.yaml").open("w") as out:
            out.write(f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\nspec:\n")
            out.write(f"  commercialReference: {opening}\n")
            lines = ("    " + "x" * 76 + "\n") * 10_000
            for _ in range(250):  # 200 MB over 2.5 million lines of 80 bytes
                out.write(lines)
            out.write(closing)
        return ["validate", "m.yaml"]

    return make


def _billion_laughs(folder: Path) -> list[str]:
    lines = ['a0: &a0 "lol"']
    for level in range(1, 10):
        items = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{items}]")
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec:\n"
    write(folder / "m.yaml", text + "".join(f"  {line}\n" for line in lines))
    return ["validate", "m.yaml"]


def _deep(folder: Path) -> list[str]:
    write(folder / "m.yaml", "a: " + "[" * 200_000 + "]" * 200_000 + "\n")
    return ["validate", "m.yaml"]


def _huge_numbers(folder: Path) -> list[str]:
    spec = (
        "  shipmentId: shp_7Hk2Lm\n  action: ISL\n  partyId: rpty_p1\n"
        f"  quantity: {'9' * 500_000}\n  grossWeightKg: 1e999999\n"
        "  customsSupervision: Y\n  goodsHandlingCode: N\n"
    )
    write(folder / "m.yaml", f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec:\n{spec}")
    return ["validate", "m.yaml"]


def _cycle(through: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        write(folder / "m.yaml", cycle_manifest(10_000, through))
        return ["validate", "m.yaml"]

    return make


def _long_hex(folder: Path) -> list[str]:
    spec = (
        "  shipmentId: shp_7Hk2Lm\n  action: ISL\n  partyId: rpty_p1\n"
        f"  quantity: 0x{'f' * 3_600}\n  grossWeightKg: 1\n"
        "  customsSupervision: Y\n  goodsHandlingCode: N\n"
    )
    write(folder / "m.yaml", f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec:\n{spec}")
    return ["validate", "m.yaml"]


def _missing_shared_string(folder: Path) -> list[str]:
    write_with_shared_strings(folder / "s.xlsx", missing_shared_string_sheet(), ["x"])
    write(folder / "m.yaml", movement_sheet_manifest("s.xlsx"))
    return ["validate", "m.yaml"]


def _not_utf8_name(folder: Path) -> list[str]:
    cancellation = "kind: ExportCancellation\nmetadata: {name: c}\nspec: {declarationId: -5}\n"
    Path(os.fsdecode(bytes(folder) + b"/bad\xff.yaml")).write_text(ENVELOPE + cancellation)
    return ["validate", "--format", "sarif", "."]


FORGED = "x\nerror[fake]: injected\n.yaml"
"""A manifest name whose newline would print a second line that reads like a finding."""


def _forged_name(form: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        cancellation = "kind: ExportCancellation\nmetadata: {name: c}\nspec: {declarationId: -5}\n"
        write(folder / "manifests" / FORGED, ENVELOPE + cancellation)
        return ["validate", "--format", form, "manifests"]

    return make


def _wide_csv(folder: Path) -> list[str]:
    with (folder / "wide.csv").open("w") as out:
        out.write(",".join(SHEET_HEADERS))
        for start in range(0, 10_000_000, 100_000):
            out.write("".join(f",c{n}" for n in range(start, start + 100_000)))
        out.write("\nshp_7Hk2Lm,hawb_a2,ISL,4,40.5,rpty_p1\n")
    write(folder / "m.yaml", movement_sheet_manifest("wide.csv"))
    return ["validate", "m.yaml"]


def _csv_field(folder: Path) -> list[str]:
    with (folder / "field.csv").open("w") as out:
        out.write(",".join(SHEET_HEADERS) + "\nshp_7Hk2Lm,hawb_a2,ISL,4,40.5,")
        for _ in range(500):
            out.write("p" * 1_000_000)
        out.write("\n")
    write(folder / "m.yaml", movement_sheet_manifest("field.csv"))
    return ["validate", "m.yaml"]


def _shared_strings(folder: Path) -> list[str]:
    write_shared_strings_bomb(folder / "s.xlsx", 25_000_000, SHEET_HEADERS)
    write(folder / "m.yaml", movement_sheet_manifest("s.xlsx"))
    return ["validate", "m.yaml"]


CASES: dict[str, Case] = {
    "XLSX of 5 KB whose used range ends at XFD1048576": Case(
        _far_corner, (1,), "error[sheet.too-large]"
    ),
    "zip bomb XLSX (520 MB of sheet XML in 2.4 MB)": Case(
        _zip_bomb, (1,), "error[sheet.too-large]"
    ),
    "XLSX cell naming a shared string the workbook lacks": Case(
        _missing_shared_string, (1,), "error[sheet.unreadable]"
    ),
    "CSV header of 10 million columns (79 MB)": Case(_wide_csv, (1,), "error[sheet.too-large]"),
    "one 500 MB CSV field": Case(_csv_field, (1,), "error[sheet.too-large]"),
    "XLSX shared-strings part of 25 million entries": Case(
        _shared_strings, (1,), "error[sheet.too-large]"
    ),
    "named pipe (FIFO) among the manifests (plan)": Case(_fifo, (1,), "error[file.not-regular]"),
    "manifest linked to /dev/zero": Case(_link_to("/dev/zero"), (1,), "error[file.not-regular]"),
    "manifest linked to /dev/urandom": Case(
        _link_to("/dev/urandom"), (1,), "error[file.not-regular]"
    ),
    "state.json linked to /dev/zero (plan)": Case(_state_to_dev_zero, (3,), "not a regular file"),
    "symbolic-link cycle": Case(_link_loop, (1,), "error[file.symlink-loop]"),
    "'a'|center(1500000000)": Case(
        _jinja("{{ 'a'|center(1500000000) }}"), (1,), "error[template.too-large]"
    ),
    "'%01500000000d'|format(1)": Case(
        _jinja("{{ '%01500000000d'|format(1) }}"), (1,), "error[template.too-large]"
    ),
    "([1]*999999)|map('string')|join(','*999)": Case(
        _jinja("{{ ([1]*999999)|map('string')|join(','*999) }}"), (1,), "error[template.too-large]"
    ),
    "string doubling macro": Case(
        _jinja(
            "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}"
            "{% endif %}{% endmacro %}{{ d('a', 40) }}"
        ),
        (1,),
        "error[template.too-large]",
    ),
    "replace blow-up": Case(
        _jinja("{{ ('a' * 1000000)|replace('a', 'a' * 2000) }}"),
        (1,),
        "error[template.too-large]",
    ),
    "200 MB one-line manifest": Case(_one_line, (1,), "error[yaml.line-too-long]"),
    "200 MB value in a | block of 2.5 million short lines": Case(
        _block, (1,), "error[yaml.value-too-long]"
    ),
    "200 MB double-quoted value over 2.5 million short lines": Case(
        _flow('"start', '    end"\n'), (1,), "error[yaml.value-too-long]"
    ),
    "200 MB plain value over 2.5 million short lines": Case(
        _flow("start", ""), (1,), "error[yaml.value-too-long]"
    ),
    "billion laughs (YAML aliases, 10^9 values)": Case(_billion_laughs, (1,), "error[yaml.alias]"),
    "nesting 200,000 levels deep": Case(_deep, (1,), "error[yaml.too-deep]"),
    "huge numbers (a 500,000-digit integer, 1e999999)": Case(
        _huge_numbers, (1,), "error[schema.type]"
    ),
    "a dependsOn cycle over 10,000 documents": Case(
        _cycle("dependsOn"), (1,), "error[project.cycle]: dependency cycle of 10,000 documents"
    ),
    "a ${ref:} cycle over 10,000 documents": Case(
        _cycle("reference"), (1,), "error[project.cycle]: dependency cycle of 10,000 documents"
    ),
    # A whole number past the largest double is named as such (492e428), not a string.
    "quantity: 0x and 3,600 f (4,335 decimal digits)": Case(
        _long_hex, (1,), "error[schema.not-finite]"
    ),
    "--format sarif on a file name with a byte that is not UTF-8": Case(
        _not_utf8_name, (1,), '"uri": "bad%FF.yaml"'
    ),
    "a manifest path with a newline (a forged finding), text": Case(
        _forged_name("text"), (1,), "x\\nerror[fake]: injected\\n.yaml:"
    ),
    "a manifest path with a newline (a forged finding), --format json": Case(
        _forged_name("json"), (1,), '"findings"', json_output=True
    ),
    "template escape: ''.__class__.__mro__": Case(
        _jinja("{{ ''.__class__.__mro__[1].__subclasses__() }}"), (1,), "error[template."
    ),
    "template escape: cycler globals, os.popen": Case(
        _jinja("{{ cycler.__init__.__globals__.os.popen('id').read() }}"), (1,), "error[template."
    ),
    "template escape: self context": Case(
        _jinja("{{ self._TemplateReference__context }}"), (1,), "error[template."
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_input_is_a_finding_within_the_bounds(
    name: str, tmp_path: Path, results: dict[str, Any]
) -> None:
    case = CASES[name]
    argv = case.make(tmp_path)
    done = run_bounded([sys.executable, "-m", "customs_batch", *argv], tmp_path, seconds=SECONDS)
    report = done.stdout + done.stderr
    results.setdefault("hostile", []).append(
        {
            "case": name,
            "command": "customs-batch " + " ".join(argv),
            "exit": done.code,
            "peak_mb": done.peak_mb,
            "seconds": done.seconds,
            "first_line": next((line for line in report.splitlines() if "error" in line), "")[:160],
        }
    )
    assert done.code is not None, f"still running after {SECONDS} s"
    assert done.code in case.codes, report[-3000:]
    assert case.expect in report, report[-3000:]
    assert "Traceback" not in report and "internal error" not in report
    assert "uid=" not in report  # no escape ran a command
    # No line of the report is a finding forged by a file name.
    assert not any(line.lstrip().startswith("error[fake]") for line in report.splitlines())
    if case.json_output:
        assert "\ufffd" not in done.stdout, "stdout is not valid UTF-8"
        json.loads(done.stdout)
