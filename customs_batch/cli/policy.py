"""``customs-batch policy``: the team's own rules of ``policies/*.yaml``."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.errors import ExitCode


@click.group()
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
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def test_policies(project: Path | None) -> int:
    """Run each policy's own examples: every good one must pass, every bad one must fail.

    PROJECT is the project folder (default: the one around the current folder, found as
    validate finds it). Exits 1 naming each policy whose good example fails or whose bad
    example passes, or whose file has a problem; 0 when every example behaves.

    \b
    Examples:
      customs-batch policy test
      customs-batch policy test path/to/project
    """
    from customs_batch.manifest.discover import find_project_root
    from customs_batch.validation.team_rules import POLICY_DIR, has_policies

    root = find_project_root((project or Path.cwd()) / "customs-batch.yaml")
    if not has_policies(root):
        click.echo(f"No policies in {root / POLICY_DIR}: nothing to test.", err=True)
        return int(ExitCode.OK)
    from customs_batch.validation.policies import run_examples
    from customs_batch.validation.policy_files import project_policies

    loaded = project_policies(root)
    failed = False
    for finding in loaded.findings:
        failed = True
        click.echo(f"{finding.location.file}:{finding.location.line}: error: {finding.message}")
    for rule in loaded.policies:
        failures = run_examples(rule)
        if failures:
            failed = True
            for failure in failures:
                click.echo(
                    f"FAIL {rule.id} ({rule.where}): {failure.which} example {failure.number}: "
                    f"{failure.reason}"
                )
        elif not rule.good and not rule.bad:
            click.echo(f"ok   {rule.id}: no examples")
        else:
            click.echo(f"ok   {rule.id}: {len(rule.good)} good, {len(rule.bad)} bad")
    return int(ExitCode.FINDINGS if failed else ExitCode.OK)
