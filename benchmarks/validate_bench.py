"""Benchmark of ``customs-batch validate`` against check-jsonschema on the same documents.

Generates 10,000 realistic departure declarations (about 3 KB each) under
``benchmarks/.work/``, once as one file per document and once as a single file, then times
``customs-batch validate`` end to end in a subprocess (wall time and peak RSS), and
check-jsonschema on the one-per-file set. check-jsonschema is installed only in the
benchmark's own virtualenv, ``benchmarks/.work/venv``.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/validate_bench.py``); the figures go
into docs/benchmarks.md by hand. Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work"
CHECK_JSONSCHEMA = "check-jsonschema==0.39.0"

OFFICES = ["DE004073", "BE212000", "FR000690", "IT261101", "PL301010", "AT100000"]
LOCODES = {"DE": "DEHAM", "BE": "BEANR", "FR": "FRLEH", "IT": "ITGOA", "PL": "PLGDN", "AT": "ATVIE"}
GOODS = [
    ("Steel bolts", "731815"),
    ("Steel nuts", "731816"),
    ("Washers", "731821"),
    ("Laptops", "847130"),
    ("Chargers", "850440"),
    ("Copper cables", "854442"),
]


def departure(number: int) -> str:
    """One departure declaration document, about 3 KB of YAML, valid against every rule."""
    office = OFFICES[number % len(OFFICES)]
    country = office[:2]
    items = []
    total = 0.0
    for index in range(4):
        description, code = GOODS[(number + index) % len(GOODS)]
        gross = round(10.0 + (number * 7 + index * 13) % 400 / 4, 1)
        total += gross
        items.append(
            f"""    - description: {description}
      commodityCode: "{code}"
      originCountry: NL
      quantity: {10 + (number + index) % 90}
      grossMass: {gross}
      netWeight: {round(gross * 0.9, 1)}
      netPrice: {100 + (number * 3 + index) % 900}
      currency: EUR
      packaging:
        - sequenceNumber: 1
          typeOfPackages: PX
          quantity: {1 + index}
          shippingMarks: ACME-{number:05d}-{index + 1}
"""
        )
    return f"""apiVersion: customs-batch/v1
kind: DepartureDeclaration
metadata:
  name: dep-bench-{number:05d}
  labels: {{lane: nl-{country.lower()}, batch: bench}}
spec:
  type: DEPARTURE
  companyId: 1
  procedureType: D1
  declarationType: externalTransit
  additionalDeclarationType: STANDARD
  commercialReference: ACME-{number:05d}
  departureOffice: NL000396
  destinationOffice: {office}
  countryOfDispatch: NL
  countryOfDestination: {country}
  security: "0"
  totalWeight: {round(total, 1)}
  goodsLocationType: A
  goodsLocationAddressType: Z
  goodsLocationAddress:
    Address:
      street: Europaweg 875
      city: Rotterdam
      postCode: 3199 LC
      countryCode: NL
  loadingCountry: NL
  loadingLocation: Rotterdam
  loadingUNLocode: NLRTM
  unloadingCountry: {country}
  unloadingLocation: Destination terminal {number % 17}
  unloadingUNLocode: {LOCODES[country]}
  Principal:
    name: Acme Export BV
    eoriNo: NL123456789
    countryCode: NL
  Consignor:
    name: Acme Export BV
    eoriNo: NL123456789
    countryCode: NL
  Consignee:
    name: Customer {number % 500} GmbH
    countryCode: {country}
    city: City {number % 50}
    street: Hauptstrasse {number % 200}
    postcode: "{10000 + number % 80000}"
  TransportMeans:
    - sequenceNumber: 1
      mode: DEPARTURE
      transportType: "30"
      identificationNumber: NL-{number % 100:02d}-XYZ
      nationality: NL
  DeclarationGuarantees:
    - guaranteeType: "1"
      guaranteeReferenceNumber: 24NL0000000000017
      guaranteeAmount: 5000
      currencyCode: EUR
      accessCode: "1234"
  Authorisations:
    - documentCategory: "C521"
      typeCode: ACR
      description: Authorised consignor
  DeclarationItems:
{"".join(items)}"""


def generate(count: int) -> tuple[Path, Path]:
    """Write ``count`` documents one per file and all in one file; reuse earlier output."""
    many = WORK / f"many-{count}"
    one = WORK / f"one-{count}" / "all.yaml"
    if not many.is_dir():
        tmp = WORK / f"many-{count}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for number in range(count):
            (tmp / f"dep-{number:05d}.yaml").write_text(departure(number), encoding="utf-8")
        tmp.rename(many)
    if not one.is_file():
        one.parent.mkdir(parents=True, exist_ok=True)
        one.write_text("---\n".join(departure(n) for n in range(count)), encoding="utf-8")
    return many, one


@dataclass(frozen=True)
class Measurement:
    """One timed command: wall and CPU seconds, peak RSS of the child in MiB, exit code."""

    label: str
    seconds: float
    cpu_seconds: float
    peak_mib: float
    exit_code: int


def measure(label: str, command: list[str], cwd: Path) -> Measurement:
    """Run ``command`` in a fresh helper process so RUSAGE_CHILDREN sees only this run."""
    helper = [sys.executable, __file__, "--measure-one", "--", *command]
    done = subprocess.run(helper, cwd=cwd, capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return Measurement(
        label, figures["seconds"], figures["cpu_seconds"], figures["peak_mib"], figures["exit_code"]
    )


def _measure_one(command: list[str]) -> None:
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its workers
    figures = {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,  # ru_maxrss is in KiB on Linux
        "exit_code": done.returncode,
    }
    print(json.dumps(figures))


def check_jsonschema_venv() -> Path:
    """The benchmark's own virtualenv with check-jsonschema, created on first use."""
    env = WORK / "venv"
    binary = env / "bin" / "check-jsonschema"
    if not binary.exists():
        venv.create(env, with_pip=True)
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", CHECK_JSONSCHEMA]
        subprocess.run(pip, check=True)
    return binary


def run(count: int, skip_check_jsonschema: bool) -> list[Measurement]:
    """Every measurement of the benchmark, printed as it completes."""
    many, one = generate(count)
    # --no-cache: every run loads and checks every file, as its peer does (the load cache
    # would otherwise answer the second run on the same files, and any run after a first
    # `make bench`, from what an earlier one stored).
    validate = [sys.executable, "-m", "customs_batch", "validate", "--no-cache"]
    runs = [
        ("customs-batch validate, one file per document", [*validate, many.name]),
        ("customs-batch validate --jobs 1, one file per document", [*validate, "-j1", many.name]),
        ("customs-batch validate, all in one file", [*validate, str(one.relative_to(WORK))]),
    ]
    results = []
    for label, command in runs:
        results.append(_report(measure(label, command, WORK), count))
    if not skip_check_jsonschema:
        schema_dir = WORK / "schemas"
        subprocess.run(
            [sys.executable, "-m", "customs_batch", "schema", "export", str(schema_dir)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        files = sorted(path.relative_to(WORK).as_posix() for path in many.iterdir())
        command = [
            str(check_jsonschema_venv()),
            "--schemafile",
            str(schema_dir / "document.schema.json"),
            *files,
        ]
        results.append(
            _report(measure("check-jsonschema, one file per document", command, WORK), count)
        )
    return results


def _report(measurement: Measurement, count: int) -> Measurement:
    rate = count / measurement.seconds
    print(
        f"{measurement.label}: {measurement.seconds:.2f} s, {rate:,.0f} docs/s, "
        f"CPU {measurement.cpu_seconds:.2f} s, peak RSS {measurement.peak_mib:.0f} MiB, "
        f"exit {measurement.exit_code}",
        flush=True,
    )
    return measurement


def main() -> None:
    """Parse the options and run the benchmark."""
    if sys.argv[1:2] == ["--measure-one"]:
        _measure_one(sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="documents (default 10000)")
    parser.add_argument("--skip-check-jsonschema", action="store_true")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    results = run(args.count, args.skip_check_jsonschema)
    theirs = [r for r in results if r.label.startswith("check-jsonschema")]
    if theirs:
        ours = results[0]
        print(f"speed-up over check-jsonschema, wall time: {theirs[0].seconds / ours.seconds:.1f}x")
        print(f"CPU time per document: {theirs[0].cpu_seconds / ours.cpu_seconds:.1f}x less")


if __name__ == "__main__":
    main()
