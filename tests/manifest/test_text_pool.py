"""TextPool: a text a column repeats is one string for every row; an id column is not pooled."""

from __future__ import annotations

from customs_batch.manifest.text_pool import TextPool


def test_a_repeated_text_is_one_string_for_every_row() -> None:
    pool = TextPool()
    rows = [pool.share({"Shipment": "".join(["shp_", "1"]), "Packages": 3}) for _ in range(3)]
    assert [row["Shipment"] for row in rows] == ["shp_1"] * 3
    assert rows[1]["Shipment"] is rows[0]["Shipment"] is rows[2]["Shipment"]
    assert rows[2]["Packages"] == 3


def test_a_column_of_ids_stops_being_pooled() -> None:
    pool = TextPool()
    for number in range(TextPool.LIMIT + 1):
        pool.share({"HAWB": f"hawb_{number}"})
    first = pool.share({"HAWB": "".join(["hawb_", "0"])})["HAWB"]
    again = pool.share({"HAWB": "".join(["hawb_", "0"])})["HAWB"]
    assert first == again == "hawb_0"
    assert first is not again  # no pool holds the texts of that column any more


def test_a_text_of_a_column_is_one_string_and_a_column_of_ids_stops_being_pooled() -> None:
    pool = TextPool()
    first = pool.shared(0, "".join(["action=", "ISL"]))
    assert pool.shared(0, "".join(["action=", "ISL"])) is first
    for number in range(TextPool.LIMIT + 1):
        pool.shared(1, f"hawbId=hawb_{number}")
    again = "".join(["hawbId=hawb_", "0"])
    assert pool.shared(1, again) is again  # no pool holds the texts of that column any more
    assert pool.shared(0, "".join(["action=", "ISL"])) is first  # the other column still is
