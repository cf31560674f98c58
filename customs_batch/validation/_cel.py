"""The CEL library's compiled core, imported without the package's command-line tool.

``import cel`` runs the package's ``__init__``, which imports its REPL first (``cel.cli``:
typer, rich, prompt_toolkit, pygments), about 0.2 s of CPU on every run over a project with
policies, for the two names the policies use (``compile`` and ``Context``). Both live in the
extension module ``cel.cel``: it is loaded here from the installed package's folder and
registered under its own name, so that a later ``import cel`` finds it loaded instead of
initialising the extension a second time (which it refuses). A package laid out otherwise is
imported as usual. See docs/benchmarks.md, "CLI start-up".
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from functools import cache
from types import ModuleType

_CORE = "cel.cel"


@cache
def cel_core() -> ModuleType:
    """The module whose ``compile`` and ``Context`` the policies use."""
    loaded = sys.modules.get(_CORE)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("cel")  # finds the package without running it
    folders = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec(_CORE, list(folders or ()))
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        return importlib.import_module("cel")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_CORE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_CORE]
        raise
    return module
