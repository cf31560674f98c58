"""The project-wide checks a file at a time: each file is checked alone where it is loaded
and only the files that share something with another are checked again together
(:func:`customs_batch.validation.project.project_findings`). Whatever the files hold, the
findings must be exactly those of checking every document at once, as validate and plan did
before (the oracle below: the same run, with the whole batch checked together)."""

from __future__ import annotations

import os
import pickle
import random
import re
import shutil
import subprocess
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import Document
from customs_batch.planning import inputs
from customs_batch.planning.inputs import load_inputs
from customs_batch.validation import batch, project
from customs_batch.validation.batch import validate_paths
from customs_batch.validation.project import (
    ProjectPart,
    check_project,
    key_numbers,
    meeting_keys,
    project_findings,
    project_part,
    sharing,
)
from tests.validation.samples import MOVEMENT_YAML

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Every project-wide rule has a broken example; the valid manifests bring references,
# dependsOn, lanes, a template group, party updates, a deactivation and spreadsheets.
SOURCES = sorted((EXAMPLES / "manifests").glob("*.yaml")) + sorted(
    (EXAMPLES / "bad").glob("project-*.yaml.bad")
)


def _documents() -> list[str]:
    """Every document of the sources, as YAML text."""
    texts = []
    for source in SOURCES:
        for text in re.split(r"^---\s*$", source.read_text(encoding="utf-8"), flags=re.M):
            if "kind:" in text:
                texts.append(text.strip("\n") + "\n")
    return texts


DOCUMENTS = _documents()
PARTY_FIELDS = ["eoriNo: DE123456789012345", "street: Noorderlaan 147", "city: Antwerpen"]
ENVELOPE = "apiVersion: customs-batch/v1\nkind: {kind}\nmetadata:\n  name: {name}\n{more}spec:\n"


def _made(chance: random.Random, number: int, count: int) -> str:
    """A small document (``made-<number>`` of ``count``) that relates to others: movements of a few HAWBs (some waiting for
    others, some for documents that are not there), deactivations of those HAWBs, party
    updates and cancellations of the examples' departures (by reference, some naming an
    output a departure has not) or of a literal ID, template groups with one of two codes."""
    pick = chance.choice
    waits = ""
    if chance.random() < 0.4:
        waits = f"  dependsOn: [{pick(['Movement', 'HawbDeactivation'])}/made-{chance.randrange(count + 1)}]\n"
    departure = pick(["dep-rtm-ham-0001", "dep-rtm-ant-0002", "dep-gone"])
    declaration = pick(
        [
            f"${{ref:DepartureDeclaration/{departure}.declarationId}}",
            f"${{ref:DepartureDeclaration/{departure}.status}}",
            f"${{ref:TemplateGroup/made-{chance.randrange(count + 1)}.templateGroupId}}",
            "501",
            "501",
        ]
    )
    hawb = f"hawb_a{chance.randrange(1, 4)}"
    kind, spec = pick(
        [
            (
                "Movement",
                "  shipmentId: shp_7Hk2Lm\n"
                # Some on the master AWB (no HAWB): a lane no deactivation ends.
                + (f"  hawbId: {hawb}\n" if chance.random() < 0.75 else "")
                + "  action: VAH\n"
                f"  quantity: {chance.randrange(1, 3)}\n  grossWeightKg: 10.5\n"
                "  customsSupervision: N\n  goodsHandlingCode: N\n",
            ),
            ("HawbDeactivation", f"  shipmentId: shp_7Hk2Lm\n  hawbId: {hawb}\n"),
            (
                "TransitPartyUpdate",
                f"  declarationId: {declaration}\n  variant: {pick(['departure', 'arrival'])}\n"
                "  Consignee:\n"
                + "".join(f"    {field}\n" for field in chance.sample(PARTY_FIELDS, 2)),
            ),
            ("ExportCancellation", f"  declarationId: {declaration}\n"),
            (
                "TemplateGroup",
                f"  name: Group {number}\n  code: {pick(['EU-ROAD', 'EU-AIR'])}\n  companyId: 1\n"
                "  isDefault: false\n  DeclarationTemplates: []\n",
            ),
        ]
    )
    return ENVELOPE.format(kind=kind, name=f"made-{number}", more=waits) + spec


DEPARTURES = [text for text in DOCUMENTS if "kind: DepartureDeclaration" in text]


def _twin(text: str) -> str:
    """The departure under another name with another item description: another request,
    the same declaration (its declarant, reference, offices and goods)."""
    renamed = re.sub(r"^  name: (\S+)$", r"  name: \1-twin", text, count=1, flags=re.M)
    return re.sub(r"description: (.+)$", r"description: \1 (again)", renamed, count=1, flags=re.M)


def _recased(text: str, chance: random.Random) -> str:
    """The document with a capital in its name, sometimes (names differing by case)."""
    found = re.search(r"^  name: (\S+)$", text, flags=re.M)
    if found is None or chance.random() < 0.7:
        return text
    name = found.group(1)
    place = chance.randrange(len(name))
    return text.replace(
        found.group(0), f"  name: {name[:place]}{name[place].upper()}{name[place + 1 :]}", 1
    )


def random_project(folder: Path, seed: int) -> list[Path]:
    """A project whose manifests are the sources' documents, some twice, some renamed only
    by case, spread over a few files in a shuffled order: names, requests, lanes, codes and
    declarations shared within files and across them."""
    chance = random.Random(seed)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name in ("customs-batch.yaml", "templates", "data"):
        source = EXAMPLES / name
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy(source, folder / name)
    picked = chance.sample(DOCUMENTS, chance.randrange(0, 6))
    picked += chance.choices(DOCUMENTS, k=chance.randrange(0, 3))  # some twice
    made = chance.randrange(2, 10)
    picked += [_made(chance, number, made) for number in range(made)]
    if chance.random() < 0.5:  # the same declaration again under another name
        picked.append(_twin(chance.choice(DEPARTURES)))
    chance.shuffle(picked)
    count = chance.randrange(2, 8)
    files: list[list[str]] = [[] for _ in range(count)]
    for text in picked:
        files[chance.randrange(count)].append(_recased(text, chance))
    manifests = folder / "manifests"
    manifests.mkdir()
    written = []
    for index, texts in enumerate(files):
        if texts:
            path = manifests / f"part-{index}.yaml"
            path.write_text("---\n".join(texts), encoding="utf-8")
            written.append(path)
    return written


def _together(
    parts: Sequence[ProjectPart],
    documents_of: Callable[[int], Sequence[Document]],
    broken: Sequence[Address] | frozenset[Address] | set[Address] = (),
    *,
    errors_only: bool = False,
) -> list[Finding]:
    """The oracle: every file's documents checked at once, as before files were checked
    apart (every finding, also when only the errors are asked for)."""
    return check_project(
        [doc for index in range(len(parts)) for doc in documents_of(index)], broken
    )


SEEDS = range(300)


@pytest.mark.parametrize("seed", SEEDS)
def test_validate_finds_what_checking_everything_at_once_finds(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = random_project(tmp_path / "project", seed)
    apart = validate_paths(files, jobs=1)
    monkeypatch.setattr(batch, "project_findings", _together)
    whole = validate_paths(files, jobs=1)
    assert apart == whole


def warning_project(folder: Path, seed: int) -> list[Path]:
    """A project a plan takes (a plan with errors loads the manifests again, whole), with
    warnings within files and across them: each HAWB's movements in one file, some of them
    the same request twice, and deactivations of those HAWBs in any file."""
    chance = random.Random(seed)
    count = chance.randrange(2, 7)
    files: list[list[str]] = [[] for _ in range(count)]
    number = 0
    for hawb in range(1, 5):
        into = files[chance.randrange(count)]
        for _ in range(chance.randrange(0, 4)):
            quantity = chance.randrange(1, 3)
            into.append(
                MOVEMENT_YAML.format(name=f"m-{number}", hawb=f"hawb_{hawb}", quantity=quantity)
            )
            number += 1
    for deactivated in chance.sample(range(1, 5), chance.randrange(0, 3)):  # each once
        spec = f"  shipmentId: shp_1\n  hawbId: hawb_{deactivated}\n"
        text = ENVELOPE.format(kind="HawbDeactivation", name=f"d-{number}", more="") + spec
        files[chance.randrange(count)].append(text)
        number += 1
    (folder / "manifests").mkdir(parents=True)
    written = []
    for index, texts in enumerate(files):
        if texts:
            path = folder / "manifests" / f"part-{index}.yaml"
            path.write_text("---\n".join(texts), encoding="utf-8")
            written.append(path)
    return written


@pytest.mark.parametrize("seed", SEEDS[::5])
def test_plan_finds_what_checking_everything_at_once_finds(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = warning_project(tmp_path / "project", seed)
    apart = load_inputs(files, jobs=1)
    monkeypatch.setattr(inputs, "project_findings", _together)
    whole = load_inputs(files, jobs=1)
    assert not whole.failed
    assert apart.validation == whole.validation
    assert apart.documents == whole.documents


def test_the_random_projects_meet_every_project_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above means something only if the projects make every project-wide
    finding (each rule of validation/project.py and the checks it calls), and often make
    findings across files (a file checked alone finds something else)."""
    monkeypatch.chdir(tmp_path)
    rules: set[str] = set()
    across = 0
    for seed in SEEDS:
        files = random_project(tmp_path / "project", seed)
        result = validate_paths(files, jobs=1)
        rules |= {f.rule for f in result.findings if f.rule.startswith("project.")}
        outcomes = [batch.validate_paths([file], jobs=1) for file in files]
        alone = sum(len([f for f in o.findings if f.rule.startswith("project.")]) for o in outcomes)
        together = len([f for f in result.findings if f.rule.startswith("project.")])
        across += together != alone
    expected = {
        "project.cycle",
        "project.duplicate-address",
        "project.duplicate-request",
        "project.duplicate-template-code",
        "project.hawb-deactivated-with-movements",
        "project.movement-order",
        "project.name-case",
        "project.party-update-variant",
        "project.reference-type",
        "project.same-declaration",
        "project.two-owners",
        "project.unknown-dependency",
        "project.unknown-output-field",
        "project.unknown-reference",
        "project.wrong-declaration",
    }
    assert expected <= rules
    assert across >= len(SEEDS) // 2


def _document(text: str, tmp_path: Path) -> list[Document]:
    path = tmp_path / "one.yaml"
    path.write_text(text, encoding="utf-8")
    return list(batch.slim_document(doc) for doc in load_inputs([path], jobs=1).documents)


def _keys(*numbers: int) -> bytes:
    return array("Q", numbers).tobytes()


def test_a_file_that_shares_nothing_keeps_its_own_findings() -> None:
    first = ProjectPart(_keys(1, 2), ())
    second = ProjectPart(_keys(3), ())
    third = ProjectPart(_keys(2, 4), ())
    assert sharing([first.keys, second.keys, third.keys]) == [True, False, True]
    asked: list[int] = []

    def documents_of(index: int) -> list[Document]:
        asked.append(index)
        return []

    project_findings([first, second, third], documents_of)
    assert asked == [0, 2]


@pytest.mark.parametrize("slim", [True, False], ids=["validate's slim", "plan's whole"])
def test_what_two_documents_share_is_in_both_keys(tmp_path: Path, slim: bool) -> None:
    def keys(**values: object) -> set[int]:
        text = MOVEMENT_YAML.format(**{"name": "m-1", "hawb": "hawb_1", "quantity": 1, **values})
        documents = _document(text, tmp_path)
        if not slim:
            documents = load_inputs([tmp_path / "one.yaml"], jobs=1).documents
        return set(key_numbers(meeting_keys(documents)))

    one = keys()
    assert len(one) == 2  # its name and its lane (the same request is in the same lane)
    # Another name, HAWB and quantity: nothing shared (the shipment and party are no key).
    assert keys(name="m-2", hawb="hawb_2", quantity=2).isdisjoint(one)
    # The same name in other capitals, the same lane, the same request: a key shared.
    assert not keys(name="M-1", hawb="hawb_2", quantity=2).isdisjoint(one)
    assert not keys(name="m-2", quantity=2).isdisjoint(one)
    assert not keys(name="m-2", hawb="hawb_1", quantity=1).isdisjoint(one)
    # A broken document's name is a key: a reference to it elsewhere meets it.
    broken = meeting_keys([], {Address(Kind.MOVEMENT, "m-1")})
    assert not set(key_numbers(broken)).isdisjoint(one)


_KEYS_IN_A_PROCESS = """
import sys
from pathlib import Path
from customs_batch.planning.inputs import load_inputs
from customs_batch.validation.project import key_numbers, meeting_keys
keys = meeting_keys(load_inputs([Path(sys.argv[1])], jobs=1).documents)
print(sorted(key_numbers(keys)))
"""


def test_the_keys_are_the_same_in_every_process(tmp_path: Path) -> None:
    """Keys are kept in the load cache and compared with another run's: they must not
    depend on a process's own hashing (``PYTHONHASHSEED``), nor hold a document's values."""
    path = tmp_path / "one.yaml"
    path.write_text(
        MOVEMENT_YAML.format(name="m-1", hawb="hawb_1", quantity=4242), encoding="utf-8"
    )
    seen = set()
    for seed in ("0", "1", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _KEYS_IN_A_PROCESS, str(path)],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
            timeout=120,
        )
        seen.add(done.stdout)
    assert len(seen) == 1
    keys = meeting_keys(load_inputs([path], jobs=1).documents)
    assert len(keys) == 2 * 8
    assert b"4242" not in keys and b"hawb_1" not in keys
    assert project_part([], ()).findings == ()


def test_keys_gathered_in_batches_are_the_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The texts of keys are digested a batch at a time (a bound on memory): batches of two
    give the same keys as one batch."""
    monkeypatch.chdir(tmp_path)
    files = random_project(tmp_path / "project", 7)
    documents = load_inputs(files, jobs=1).documents
    whole = set(key_numbers(meeting_keys(documents)))
    monkeypatch.setattr(project, "_KEY_BATCH", 2)
    assert set(key_numbers(meeting_keys(documents))) == whole
    assert len(whole) > 10


@pytest.mark.parametrize("count", [0, 1, 2, 5])
def test_sharing_is_found_whatever_the_sizes_of_the_parts(count: int) -> None:
    """Each key found in two parts, whichever is the biggest (its keys are only looked up)."""
    chance = random.Random(count)
    parts = [_keys(*chance.sample(range(40), chance.randrange(0, 12))) for _ in range(count)]
    expected = [
        any(
            set(key_numbers(part)) & set(key_numbers(other))
            for place, other in enumerate(parts)
            if place != index
        )
        for index, part in enumerate(parts)
    ]
    assert sharing(parts) == expected
    for many in range(count):  # each part the biggest in turn
        bigger = [*parts]
        bigger[many] += _keys(*range(100, 200))
        assert sharing(bigger) == expected


def test_a_part_read_back_holds_its_keys_and_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a loading process sends it and the load cache keeps it."""
    monkeypatch.chdir(tmp_path)
    files = random_project(tmp_path / "project", 3)
    documents = load_inputs(files, jobs=1).documents
    part = project_part(documents, ())
    assert part.findings  # the generated projects always find something
    again = pickle.loads(pickle.dumps(part))
    assert (again.keys, again.findings) == (part.keys, part.findings)
    empty = pickle.loads(pickle.dumps(project_part([], ())))
    assert (empty.keys, empty.findings) == (b"", ())


@pytest.mark.parametrize("seed", SEEDS[::6])
def test_keys_worked_out_in_the_run_find_the_same(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file too big for the load cache brings no keys: they are worked out from its
    documents, only when the run has other files; the findings are the same."""
    monkeypatch.chdir(tmp_path)
    files = random_project(tmp_path / "project", seed)
    monkeypatch.setattr(batch, "MAX_CACHED_DOCUMENTS", 1)
    apart = validate_paths(files, jobs=1)
    monkeypatch.setattr(batch, "project_findings", _together)
    assert apart == validate_paths(files, jobs=1)
    plan_files = warning_project(tmp_path / "plan", seed)
    monkeypatch.setattr(inputs, "MAX_CACHED_DOCUMENTS", 1)
    planned = load_inputs(plan_files, jobs=1)
    monkeypatch.setattr(inputs, "project_findings", _together)
    assert planned.validation == load_inputs(plan_files, jobs=1).validation


def test_a_big_file_alone_brings_no_keys(tmp_path: Path) -> None:
    text = "---\n".join(
        MOVEMENT_YAML.format(name=f"m-{n}", hawb=f"hawb_{n}", quantity=n) for n in range(1, 4)
    )
    documents = _document(text, tmp_path)
    assert project_part(documents, (), keys=False).keys is None
    part = pickle.loads(
        pickle.dumps(project_part(documents, {Address(Kind.MOVEMENT, "x")}, keys=False))
    )
    assert part.keys is None and part.broken == {Address(Kind.MOVEMENT, "x")}


def test_a_lone_document_naming_nothing_has_no_project_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What lets a file of one document skip the checks (``project_part``): over every
    document of the examples and the generated ones, of every kind, alone."""
    monkeypatch.chdir(tmp_path)
    chance = random.Random(0)
    texts = DOCUMENTS + [_made(chance, number, 5) for number in range(200)]
    kinds = set()
    for index, text in enumerate(texts):
        path = tmp_path / f"alone-{index}.yaml"
        path.write_text(text, encoding="utf-8")
        for document in load_inputs([path], jobs=1).documents:
            kinds.add(document.kind)
            if not document.references and not document.depends_on:
                assert check_project([document]) == [], text
    assert kinds == set(Kind)


def test_the_errors_alone_are_every_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a plan asks (``errors_only``): every error, without reading the warnings of the
    files that share nothing, from parts read back as the load cache gives them."""
    monkeypatch.chdir(tmp_path)
    skipped = with_errors = 0
    for seed in SEEDS[::5]:
        made = random_project if seed % 2 else warning_project
        files = made(tmp_path / f"project-{seed}", seed)
        per_file = [load_inputs([file], jobs=1).documents for file in files]
        parts = [pickle.loads(pickle.dumps(project_part(docs, ()))) for docs in per_file]
        every = project_findings(parts, per_file.__getitem__)
        parts = [pickle.loads(pickle.dumps(project_part(docs, ()))) for docs in per_file]
        errors = project_findings(parts, per_file.__getitem__, errors_only=True)
        assert Counter(f for f in errors if f.severity is Severity.ERROR) == Counter(
            f for f in every if f.severity is Severity.ERROR
        )
        assert set(errors) <= set(every)
        skipped += len(errors) < len(every)
        with_errors += any(f.severity is Severity.ERROR for f in every)
    assert skipped and with_errors  # warnings left unread, and errors found
