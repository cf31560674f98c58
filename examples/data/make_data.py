"""Write the example spreadsheet exports (needs xlsxwriter: `pip install -e '.[dev]'`).

The generated files are committed, so `make demo` needs no dev tools; run this again only
to change them:

    python examples/data/make_data.py

- movements.xlsx: RTO movements on the sandbox seed's shipments, as an Excel export
  (typed numbers, a title row above the header, a hidden sheet of notes).
- departures.csv: transit departures as a German Excel saves "CSV": Windows-1252, `;`,
  CRLF, decimal commas, a quoted field holding a line break.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import xlsxwriter

HERE = Path(__file__).parent

MOVEMENT_HEADERS = [
    "Shipment",
    "HAWB",
    "Action",
    "Packages",
    "Gross weight",
    "Party",
    "Supervision",
    "Source",
    "Document type",
    "Declaration type",
    "Declaration number",
    "Declaration",
]
# Movements on one shipment and HAWB apply in this order (arrival, storage in, clearance).
MOVEMENTS = [
    ["shp_7Hk2Lm", "hawb_a2", "VAH", 4, 40.0, "rpty_p2", "Y", "EXTERNAL", "X", "IM",
     "26NLR0000000042028", None],
    ["shp_7Hk2Lm", "hawb_a2", "ISL", 4, 40.0, "rpty_p2", "Y", None, None, None, None, None],
    [None] * 12,  # a blank line, as analysts leave them
    ["shp_9Xc4Rt", "hawb_b1", "ISL", 6, 60.0, "rpty_p3", "Y", None, None, None, None, None],
    ["shp_9Xc4Rt", "hawb_b1", "ISC", 6, 60.0, None, "N", "INTERNAL", None, None, None,
     "dec_r2"],
]  # fmt: skip

DEPARTURE_HEADERS = [
    "Reference",
    "Destination office",
    "Destination country",
    "Total weight",
    "Unloading place",
    "UN/LOCODE",
    "Consignee",
    "Consignee street",
    "Postcode",
    "Vehicle",
    "Goods",
    "Commodity code",
    "Origin",
    "Quantity",
    "Packages",
    "Net weight",
    "Value",
]
DEPARTURES = [
    ["ACME-2026-0101", "DE004073", "DE", "48,5", "Köln", "DECGN", "Müller Stahlhandel GmbH",
     "Hafenstraße 1", "50678", "NL-56-DEF", "Gewürze\nin Säcken", "090421", "NL", "20", "2",
     "46,0", "310,50"],
    ["ACME-2026-0102", "DE004073", "DE", "120", "Hamburg", "DEHAM", "Globex GmbH",
     "Kehrwieder 2", "20457", "NL-78-GHJ", "Steel bolts", "731815", "NL", "100", "4", "115,5",
     "1.250,00"],
]  # fmt: skip


def write_movements(path: Path) -> None:
    book = xlsxwriter.Workbook(str(path))
    book.set_properties({"created": dt.datetime(2026, 3, 2, 8, 0)})  # the same bytes each run
    bold = book.add_format({"bold": True})
    sheet = book.add_worksheet("Movements")
    sheet.write_string(0, 0, "RTO movements, export of 2026-03-02", bold)
    sheet.write_row(1, 0, MOVEMENT_HEADERS, bold)
    for index, row in enumerate(MOVEMENTS, start=2):
        for column, value in enumerate(row):
            if isinstance(value, str):
                sheet.write_string(index, column, value)
            elif value is not None:
                sheet.write_number(index, column, value)
    notes = book.add_worksheet("Notes")
    notes.write_string(0, 0, "Exported by the warehouse system; header on row 2.")
    notes.hide()
    book.close()


def write_departures(path: Path) -> None:
    with open(path, "w", encoding="cp1252", newline="") as out:
        writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
        writer.writerow(DEPARTURE_HEADERS)
        writer.writerows(DEPARTURES)


if __name__ == "__main__":
    write_movements(HERE / "movements.xlsx")
    write_departures(HERE / "departures.csv")
