"""plan --format markdown: a pull-request comment that reads well and fits."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from customs_batch.kinds import Kind
from customs_batch.planning.graph import Edge, EdgeReason
from customs_batch.planning.model import Action
from customs_batch.reports import render_plan
from customs_batch.reports._markdown import GITHUB_COMMENT_LIMIT, markdown

from .plans import address, big_view, change, view

PARSER = MarkdownIt("commonmark").enable("table")


def _tokens(text: str) -> list[Token]:
    return PARSER.parse(text)


def _headings(tokens: list[Token]) -> list[str]:
    return [
        tokens[i + 1].content
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and token.tag == "h4"
    ]


def _rows(text: str) -> dict[str, str]:
    """The summary table, first column to second, as a reader sees it."""
    tokens = _tokens(text)
    rows: dict[str, str] = {}
    cells: list[str] = []
    for token in tokens:
        if token.type == "tr_open":
            cells = []
        elif token.type == "inline" and cells is not None:
            cells.append(token.content)
        if token.type == "tr_close" and len(cells) == 2:
            rows[cells[0].strip("*")] = cells[1].strip("*")
    return rows


SMALL = view(
    change(
        Kind.TEMPLATE_GROUP,
        "eu-road",
        Action.UPDATE,
        values=(("name", "EU road imports", "EU road"),),
    ),
    change(
        Kind.MOVEMENT,
        "mov-1",
        Action.REFUSED,
        reason="a movement is immutable: record a correcting movement instead <not a tag>",
        values=(("quantity", 4, 5),),
    ),
    change(Kind.DEPARTURE_DECLARATION, "dep-1", Action.CREATE),
    change(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd-1",
        Action.CREATE,
        depends_on=(address(Kind.DEPARTURE_DECLARATION, "dep-1"),),
        unknown=(("declarationId",),),
    ),
    change(Kind.EXPORT_CANCELLATION, "c-1", Action.NO_CHANGE),
    edges={
        address(Kind.TRANSIT_PARTY_UPDATE, "upd-1"): (
            Edge(address(Kind.DEPARTURE_DECLARATION, "dep-1"), (EdgeReason.REFERENCE,)),
        )
    },
)


def test_the_summary_table_counts_actions_requests_and_time() -> None:
    rows = _rows(render_plan("markdown", SMALL))
    assert rows["to update"] == "1"
    assert rows["refused"] == "1"
    assert rows["to create"] == "2"
    assert rows["unchanged"] == "1"
    assert rows["requests"] == "at least 4"  # the group's update lists its groups first
    assert rows["time"] == "at least 1.8 s at 100/minute"


def test_blocked_changes_come_first_with_their_reason_and_values() -> None:
    text = render_plan("markdown", SMALL)
    assert _headings(_tokens(text)) == ["Refused (1)", "To update (1)", "To create (2)"]
    assert "**1 blocking:**" in text
    assert (
        "- **`Movement/mov-1`**: a movement is immutable: record a correcting movement "
        "instead &lt;not a tag&gt;" in text
    )
    assert "  - `quantity`: `4` → `5`" in text
    assert '  - `name`: `"EU road imports"` → `"EU road"`' in text
    assert "  - `declarationId`: (known after apply)" in text
    assert "**`ExportCancellation/c-1`**" not in text


def test_unchanged_documents_are_listed_only_when_asked() -> None:
    shown = render_plan("markdown", view(*SMALL.plan.changes, show_unchanged=True))
    assert _headings(_tokens(shown))[-1] == "Unchanged (1)"


def test_a_small_plan_embeds_its_dependency_graph() -> None:
    tokens = _tokens(render_plan("markdown", SMALL))
    (fence,) = [t for t in tokens if t.type == "fence"]
    assert fence.info == "mermaid"
    assert fence.content.startswith("flowchart LR\n")
    assert '-->|"reference"|' in fence.content


def test_long_sections_fold_and_blocked_ones_stay_open() -> None:
    creates = [change(Kind.MOVEMENT, f"m{i}", Action.CREATE) for i in range(12)]
    refused = [change(Kind.MOVEMENT, f"r{i}", Action.REFUSED, reason="no") for i in range(12)]
    text = render_plan("markdown", view(*creates, *refused))
    assert "<details><summary>12 to create</summary>" in text
    assert "12 refused</summary>" not in text
    html = PARSER.render(text)
    assert html.count("<details>") == 2  # the graph and the creates


def test_a_10000_document_plan_fits_in_one_github_comment() -> None:
    big = big_view(10_000)
    counts = big.plan.counts
    text = render_plan("markdown", big)
    assert len(text) < GITHUB_COMMENT_LIMIT
    tokens = _tokens(text)
    assert _headings(tokens) == [
        f"Refused ({counts[Action.REFUSED]})",
        f"Needs a decision ({counts[Action.NEEDS_DECISION]})",
        f"To update ({counts[Action.UPDATE]})",
        f"To create ({counts[Action.CREATE]})",
    ]
    # Every blocking change is listed in full; what does not fit is counted and said.
    assert text.count("a movement is immutable") == counts[Action.REFUSED] == 100
    # Updates are not crowded out by the long list of new documents.
    assert text.count('  - `partyId`: `"rpty_a"` → `"rpty_b"`') > 50
    assert "- ... and " in text
    assert "This plan is too long for one comment:" in text
    rows = _rows(text)
    assert rows["to create"] == str(counts[Action.CREATE])
    assert rows["requests"] == str(big.plan.requests)
    # The graph is shown collapsed by shipment: 40 boxes, not 10,000.
    (fence,) = [t for t in tokens if t.type == "fence"]
    assert fence.content.count(":::") == 40


def test_the_length_limit_is_kept_at_any_size() -> None:
    plan = big_view(600)
    for max_characters in (4_000, 8_000, 20_000):
        text = markdown(plan, max_characters=max_characters)
        assert len(text) <= max_characters, max_characters
        assert "Refused (6)" in text


def test_a_plan_without_changes_says_so_and_draws_no_graph() -> None:
    text = render_plan("markdown", view(change(Kind.MOVEMENT, "m", Action.NO_CHANGE)))
    assert "No changes: the service matches the manifests" in text
    assert "```mermaid" not in text and "#### " not in text


def test_control_characters_in_a_value_or_a_reason_are_escaped() -> None:
    updated = change(
        Kind.TEMPLATE_GROUP,
        "g1",
        Action.UPDATE,
        reason="refused\x1b[2J by the service",
        values=(("name", "old", "new\u202eevil"),),
    )
    text = render_plan("markdown", view(updated))
    assert "refused\\\\x1b\\[2J by the service" in text
    assert '`"new\\u202eevil"`' in text
    assert "\x1b" not in text and "\u202e" not in text


HOSTILE_REASON = (
    "the service said: <img src=x onerror=alert(1)> [x](javascript:alert(1)) @team #12 *b* _i_"
)


def test_a_reason_quoting_the_service_is_shown_as_itself_not_read_as_markdown() -> None:
    # A reason quotes the service's words: a link, a mention or an issue reference in them
    # must not become one in the pull-request comment (GitHub notifies @team, links #12).
    rejected = change(Kind.MOVEMENT, "m1", Action.REJECTED, reason=HOSTILE_REASON)
    text = render_plan("markdown", view(rejected))
    item = next(line for line in text.splitlines() if line.startswith("- **`Movement/m1`**"))
    html = PARSER.render(item)
    for tag in ("<a ", "<img", "<em>", "<strong>b"):
        assert tag not in html
    assert "@<!-- -->team" in item and "#<!-- -->12" in item
    shown = html.replace("<!-- -->", "").replace("&lt;", "<").replace("&gt;", ">")
    assert HOSTILE_REASON in shown
