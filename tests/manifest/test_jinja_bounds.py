"""Templates that would build gigabytes are refused before they do, within a memory limit.

Each case runs the real CLI in a child process limited to 1 GiB of address space: the
refusal must be a finding naming the template, the line and the limit, with the exit code
of findings; a MemoryError (or a killed process) fails the test. The child's render deadline
is raised to 25 s so that a busy machine cannot turn a refusal into a timeout.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from customs_batch.manifest.jinja import _engine
from customs_batch.manifest.jinja._engine import render_inline
from tests.manifest.helpers import ENVELOPE, load_text, only, write

ONE_GIB = 1 << 30
CLI = (
    "import sys; from customs_batch.manifest.jinja import _engine; _engine.RENDER_SECONDS = 25.0; "
    "from customs_batch.cli.main import run; run(sys.argv[1:])"
)
CASES = {
    "center": "{{ 'a'|center(1500000000) }}",
    "format filter": "{{ '%01500000000d'|format(1) }}",
    "% formatting": "{{ '%01500000000d' % 1 }}",
    "str.format": "{{ '{:>1500000000}'.format(1) }}",
    "str.ljust": "{{ 'a'.ljust(1500000000) }}",
    "doubling in a macro": (
        "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}"
        "{% endmacro %}{{ d('a', 40) }}"
    ),
    "doubling a macro's output": (
        "{% macro d(n) %}{% if n %}{% set t = d(n - 1) %}{{ t }}{{ t }}{% else %}a{% endif %}"
        "{% endmacro %}{{ d(40)|length }}"
    ),
    "doubling a set block": (
        "{% set d = dict(s='ab') %}{% for i in range(40) %}{% set t %}{{ d.s }}{{ d.s }}"
        "{% endset %}{{ d.update(s=t) }}{% endfor %}"
    ),
    "replace": "{{ ('a' * 1000000)|replace('a', 'a' * 2000) }}",
    "replace with a count": "{{ ('a' * 1000000)|replace('a', 'b' * 60, 1000000000) }}",
    "* on text": "{{ 'a' * 1500000000 }}",
    "* on a list": "{{ ([1] * 1500000000)|length }}",
    "join": "{{ (['a' * 1000000] * 1000000)|join }}",
    "join of a map": "{{ ([1] * 999999)|map('string')|join(',' * 999) }}",
    "str.join of a map": "{{ (',' * 999).join(([1] * 999999)|map('string')) }}",
    "range": "{{ range(1500000000)|list|length }}",
    "indent": "{{ ('\\n' * 1000000)|indent(1000) }}",
    "wordwrap": "{{ ('a ' * 1000000)|wordwrap(1, wrapstring='x' * 1000) }}",
    "many values just under the limit": (
        "{% set l = [] %}{% for i in range(100000) %}{{ l.append('x' * 9000000) }}{% endfor %}"
    ),
    "a nested list printed": "{{ [[1] * 1000000] * 1000000 }}",
    "sum of lists": "{{ ([[1] * 1000000] * 1000000)|sum(start=[])|length }}",
    "sum of lists by attribute": (
        "{{ ([dict(l=[1] * 1000000)] * 1000000)|sum(attribute='l', start=[])|length }}"
    ),
    "integer squaring": (
        "{% set d = dict(x=10) %}{% for i in range(40) %}{{ d.update(x=d.x * d.x) }}{% endfor %}"
    ),
    "tojson indent": "{{ [1, 2]|tojson(indent=1000000000) }}",
}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ONE_GIB, ONE_GIB))


@pytest.mark.parametrize("body", CASES.values(), ids=list(CASES))
def test_a_template_building_gigabytes_is_refused_with_a_finding(body: str) -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/evil.yaml.j2"), '# defaults\nsecurity: "0"\nnote: ' + body + "\n")
    write(
        Path("m.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: evil\n"
        "spec:\n  commercialReference: R-1\n",
    )
    done = subprocess.run(
        [sys.executable, "-c", CLI, "validate", "m.yaml"],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MemoryError" not in done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("templates/evil.yaml.j2:3:"), first
    assert "error[template.too-large]: refused: " in first
    assert "the limit is " in first


def test_an_expression_in_a_document_is_bounded_too() -> None:
    write(
        Path("m.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\n"
        "spec:\n  commercialReference: \"{{ 'a'|center(1500000000) }}\"\n",
    )
    done = subprocess.run(
        [sys.executable, "-c", CLI, "validate", "m.yaml"],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "m.yaml:5:" in done.stdout
    assert (
        "refused: center would build 1,500,000,000 characters or items; the limit is 10,000,000"
        in done.stdout
    )


def test_a_loop_over_a_long_text_in_a_document_ends_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_engine, "RENDER_SECONDS", 0.2)
    loops = "{% set s = 'x' * 5000000 %}{% for c in s %}{% for d in s %}{% endfor %}{% endfor %}"
    manifest = (
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\n"
        f'spec:\n  commercialReference: "{loops}"\n'
    )
    finding = only(load_text(manifest), "template.timeout")
    assert finding.location.line == 5


def test_loops_keep_their_loop_variables() -> None:
    text = "{% for c in values.chars %}{{ loop.index }}/{{ loop.length }}{{ c }} {% endfor %}"
    assert render_inline(text, {"values": {"chars": "ab"}}, as_text=True) == "1/2a 2/2b "


def test_sum_still_adds_numbers_and_joins_lists() -> None:
    context = {"values": {"lists": [[1], [2, 3]], "numbers": [1, 2.5]}}
    assert render_inline("{{ values.lists|sum(start=[]) }}", context, as_text=False) == [1, 2, 3]
    assert render_inline("{{ values.numbers|sum }}", context, as_text=False) == 3.5
    assert render_inline("{{ values.lists|sum(start=[0]) }}", context, as_text=False) == [
        0,
        1,
        2,
        3,
    ]


def test_sum_by_attribute_adds_the_items_fields() -> None:
    items = [{"gross": 12.5, "marks": ["A"]}, {"gross": 7, "marks": ["B", "C"]}]
    context = {"values": {"items": items}}
    text = "{{ values['items'] | sum(attribute='gross') }}"
    assert render_inline(text, context, as_text=False) == 19.5
    lists = "{{ values['items'] | sum(attribute='marks', start=[]) }}"
    assert render_inline(lists, context, as_text=False) == ["A", "B", "C"]


def test_a_template_summing_an_attribute_is_not_refused() -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(
        Path("templates/mass.yaml.j2"),
        "commercialReference: R-1\ntotalWeight: {{ values['items'] | sum(attribute='gross') }}\n",
    )
    write(
        Path("m.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: mass\n"
        "values:\n  items: [{gross: 12.5}, {gross: 7}]\nspec: {}\n",
    )
    loaded = load_text(Path("m.yaml").read_text(encoding="utf-8"))
    assert not [f for f in loaded.findings if f.rule.startswith("template.")], loaded.findings
    assert loaded.documents[0].spec["totalWeight"] == 19.5


def test_join_still_joins_what_map_and_select_give() -> None:
    context = {"values": {"numbers": [1, 2, 3]}}
    assert (
        render_inline("{{ values.numbers|map('string')|join(', ') }}", context, as_text=True)
        == "1, 2, 3"
    )
    assert (
        render_inline(
            "{{ '-'.join(values.numbers|select('odd')|map('string')) }}", context, as_text=True
        )
        == "1-3"
    )
