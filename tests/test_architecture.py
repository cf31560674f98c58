"""The shape of the package, as docs/architecture.md draws it: arrows only downward, no
cycle between packages, and no package reaching into another's private modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import customs_batch

ROOT = Path(customs_batch.__file__).parent
PACKAGES = {path.name for path in ROOT.iterdir() if (path / "__init__.py").is_file()}


def _imports() -> Iterator[tuple[str, str, str]]:
    """(importing package, imported module, file) for every import of the project's own
    modules, the ones inside functions (imported when first used) included."""
    for file in sorted(ROOT.rglob("*.py")):
        relative = file.relative_to(ROOT)
        if len(relative.parts) == 1:
            continue  # the shared modules at the top: below or beside everything
        source = relative.parts[0]
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.startswith("customs_batch."):
                    yield source, module, str(relative)


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, module, _ in _imports():
        target = module.split(".")[1]
        if target in PACKAGES and target != source:
            graph.setdefault(source, set()).add(target)
    return graph


def test_no_package_imports_another_packages_private_module() -> None:
    crossing = sorted(
        f"{file}: {module}"
        for source, module, file in _imports()
        if module.split(".")[1] != source
        and any(
            part.startswith("_") and not part.startswith("__") for part in module.split(".")[2:]
        )
    )
    assert crossing == [], "make the module public in the package that owns it"


def test_the_packages_import_each_other_without_a_cycle() -> None:
    graph = _package_graph()
    done: set[str] = set()

    def visit(package: str, path: tuple[str, ...]) -> None:
        assert package not in path, f"a cycle: {' -> '.join((*path, package))}"
        if package in done:
            return
        for target in sorted(graph.get(package, ())):
            visit(target, (*path, package))
        done.add(package)

    for package in sorted(graph):
        visit(package, ())


def test_the_lower_packages_stay_below() -> None:
    graph = _package_graph()
    # The state keeps records and knows no client, no environment and no command.
    assert graph.get("state", set()) <= set()
    # Settings and the client: neither knows where a state lives.
    assert "state" not in graph.get("environments", set())
    assert graph.get("client", set()) <= set()
    # The emulator is the service: it shares nothing of the planner or the client, only the
    # kinds' names (customs_batch.kinds itself imports nothing of the project).
    assert graph.get("sandbox", set()) <= {"kinds"}
    shared = {
        module
        for source, module, _ in _imports()
        if source == "sandbox" and module.split(".")[1] == "kinds"
    }
    assert shared <= {"customs_batch.kinds", "customs_batch.kinds.Kind"}, shared
    # Only the CLI imports the CLI.
    assert all("cli" not in targets for source, targets in graph.items() if source != "cli")


def test_only_the_cli_imports_click() -> None:
    importing = sorted(
        str(file.relative_to(ROOT))
        for file in ROOT.rglob("*.py")
        if file.relative_to(ROOT).parts[0] != "cli"
        and any(
            isinstance(node, ast.Import | ast.ImportFrom)
            and any(
                (alias.name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
                == "click"
                for alias in node.names
            )
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        )
    )
    assert importing == [], "commands are functions: only cli/ parses options"


# What only a command of commands/ may call: loading the project and the manifests,
# connecting, opening a state, settling, planning, applying, and the cores of the commands
# that work on files (templates, sheet, schema, policy test).
ORCHESTRATION = (
    "customs_batch.backends",
    "customs_batch.shared_rate_limit",
    "customs_batch.environments.load_project",
    "customs_batch.environments.connect",
    "customs_batch.client.CustomsClient",
    "customs_batch.state.backend",
    "customs_batch.state.postgres",
    "customs_batch.state.edits",
    "customs_batch.execution.settle",
    "customs_batch.execution.reconcile.refresh",
    "customs_batch.execution.reconcile.adopt",
    "customs_batch.execution.reconcile.import_object",
    "customs_batch.execution.reconcile.status_entries",
    "customs_batch.execution.apply.apply_plan",
    "customs_batch.planning.plan_changes",
    "customs_batch.planning.inputs",
    "customs_batch.validation.batch",
    "customs_batch.validation.schema_export",
    "customs_batch.validation.policies",
    "customs_batch.validation.policy_files",
    "customs_batch.validation.team_rules",
    "customs_batch.manifest.discover",
    "customs_batch.sandbox.server.serve",
    "customs_batch.sandbox.builtin_seed_text",
    "customs_batch.manifest.templates.catalog",
    "customs_batch.manifest.spreadsheet",
)


def test_the_cli_leaves_the_work_to_commands() -> None:
    reaching = sorted(
        f"{file}: {module}"
        for source, module, file in _imports()
        if source == "cli"
        and any(module == name or module.startswith(f"{name}.") for name in ORCHESTRATION)
    )
    assert reaching == [], "parse, call one function of customs_batch.commands, render"
