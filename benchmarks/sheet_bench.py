"""Spreadsheet bulk load: a movements export expanded and validated end to end.

Writes a movements export of N rows (XLSX with xlsxwriter, and CSV the way a European
spreadsheet program saves it: BOM, semicolons, CRLF, decimal comma) and one forEach
manifest over it, then times ``customs-batch validate`` in a subprocess and reads its peak
RSS. Run at 10,000 and 100,000 rows to see that memory stays nearly flat in the row count.

    python benchmarks/sheet_bench.py [--rows 100000 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import xlsxwriter

HEADERS = ["Shipment", "HAWB", "Action", "Packages", "Gross weight", "Party", "Supervision"]
MANIFEST = """\
apiVersion: customs-batch/v1
kind: Movement
forEach: {{file: {file}{sheet}, decimalComma: true}}
metadata:
  name: "mov-{{{{ row_number }}}}"
spec:
  shipmentId: "{{{{ row.Shipment }}}}"
  hawbId: "{{{{ row.HAWB }}}}"
  action: "{{{{ row.Action }}}}"
  quantity: "{{{{ row.Packages }}}}"
  grossWeightKg: "{{{{ row['Gross weight'] }}}}"
  customsSupervision: "{{{{ row.Supervision }}}}"
  goodsHandlingCode: N
  partyId: "{{{{ row.Party }}}}"
"""


def manifest(file: str) -> str:
    """The manifest over ``file``: a workbook's sheet named, a CSV file's not (it holds one
    table; naming a sheet for it is an error since 2026-11-28)."""
    sheet = ", sheet: Movements" if file.endswith(".xlsx") else ""
    return MANIFEST.format(file=file, sheet=sheet)


def row(number: int) -> list[str | int | float]:
    """One valid ISL movement (storage in: party required, no declaration)."""
    return [
        f"shp_{number % 97:05d}",
        f"hawb_{number:07d}",
        "ISL",
        1 + number % 40,
        round(1.5 + number % 1000 / 10, 1),
        f"rpty_{number % 13}",
        "Y",
    ]


def write_xlsx(path: Path, rows: int) -> None:
    """The export as Excel writes it: typed cells, constant memory while writing."""
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    sheet = book.add_worksheet("Movements")
    sheet.write_row(0, 0, HEADERS)
    for number in range(2, rows + 2):
        sheet.write_row(number - 1, 0, row(number))
    book.close()


def write_csv(path: Path, rows: int) -> None:
    """The export as a German Excel saves "CSV UTF-8": BOM, ';', CRLF, decimal comma."""
    with open(path, "w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
        writer.writerow(HEADERS)
        for number in range(2, rows + 2):
            values = row(number)
            values[4] = str(values[4]).replace(".", ",")
            writer.writerow(values)


# Each run measures inside its own wrapper process: RUSAGE_CHILDREN's ru_maxrss is the
# largest child a process ever waited for, so one shared parent would report earlier peaks.
_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], capture_output=True, check=False).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, code)
"""


def measure(folder: Path) -> tuple[float, float, float, int]:
    """Wall and CPU seconds, peak RSS (MiB) of ``customs-batch validate`` on ``folder``, and
    its exit code. CPU time shows the cost when other work shares the machine."""
    executable = Path(sys.executable).with_name("customs-batch")
    command = [str(executable), "validate", ".", "--format", "json", "-o", "report.json"]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    peak_kib, cpu, code = done.stdout.split()
    return wall, float(cpu), int(peak_kib) / 1024, int(code)


def run(rows: int, kind: str, root: Path) -> str:
    folder = root / f"{kind}-{rows}"
    (folder / "data").mkdir(parents=True, exist_ok=True)
    data = folder / "data" / f"movements.{kind}"
    (write_xlsx if kind == "xlsx" else write_csv)(data, rows)
    (folder / "movements.yaml").write_text(manifest(f"data/{data.name}"))
    wall, cpu, peak, code = measure(folder)
    return (
        f"| {kind.upper()} | {rows:,} | {wall:.1f} s | {cpu:.1f} s | {rows / wall:,.0f} rows/s | "
        f"{peak:,.0f} MiB | {code} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--keep", type=Path, default=None, help="keep the files in this folder")
    args = parser.parse_args()
    print("| file | rows | wall time | CPU time | throughput (wall) | peak RSS | exit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        for rows in sorted(args.rows):
            for kind in ("csv", "xlsx"):
                print(run(rows, kind, root), flush=True)


if __name__ == "__main__":
    main()
