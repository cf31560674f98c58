"""``customs-batch policy``: the team's own rules of ``policies/*.yaml``."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.cli._choices import CutGroup
from customs_batch.cli._paths import CutPath
from customs_batch.commands.policy import PolicyTestOptions, run_policy_examples
from customs_batch.escaping import printable


@click.group(cls=CutGroup)
def policy() -> None:
    """The team's own rules: CEL policies in the project's policies/ folder.

    \b
    Example:
      customs-batch policy test
    """


@policy.command("test")
@click.argument(
    "project",
    required=False,
    type=CutPath(exists=True, file_okay=False, path_type=Path),
)
def test_policies(project: Path | None) -> int:
    """Run each policy's own examples: every good one must pass, every bad one must fail
    (both must be selected by the policy's kinds and labels).

    PROJECT is the project folder (default: the one around the current folder, found as
    validate finds it). Exits 1 naming each policy whose good example fails or whose bad
    example passes, or whose file has a problem; 0 when every example behaves.

    \b
    Examples:
      customs-batch policy test
      customs-batch policy test path/to/project
    """
    result = run_policy_examples(PolicyTestOptions(project))
    if not result.found:
        click.echo(f"No policies in {result.folder}: nothing to test.", err=True)
        return int(result.exit_code)
    for finding in result.findings:
        loc = finding.location
        click.echo(printable(f"{loc.file}:{loc.line}: error: {finding.message}"))
    for outcome in result.outcomes:
        rule = outcome.policy
        for failure in outcome.failures:
            click.echo(
                f"FAIL {rule.id} ({rule.where}): {failure.which} example {failure.number}: "
                f"{failure.reason}"
            )
        if outcome.failures:
            continue
        if not rule.good and not rule.bad:
            click.echo(f"ok   {rule.id}: no examples")
        else:
            click.echo(f"ok   {rule.id}: {len(rule.good)} good, {len(rule.bad)} bad")
    return int(result.exit_code)
