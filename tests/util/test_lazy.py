"""Lazy package namespaces: every public name resolves, __all__ lists exactly them, and importing a package loads
none of its heavy dependencies."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import extra_reason


@pytest.mark.parametrize("package", ["occubench", "occubench.gym", "occubench.llm", "occubench.simulated",
                                     "occubench.report", "occubench.synth", "occubench.synth.executable",
                                     "occubench.synth.simulated"])
def test_every_exported_name_resolves(package: str) -> None:
    if package == "occubench.gym":
        pytest.importorskip("gymnasium", reason=extra_reason("gym"))
    module = importlib.import_module(package)
    assert module.__all__ == sorted(module._EXPORTS)
    for name in module.__all__:
        assert getattr(module, name) is getattr(importlib.import_module(module._EXPORTS[name]), name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018 - the attribute access is the test


def test_the_type_checkers_imports_of_occubench_are_its_table() -> None:
    """The one table (``_EXPORTS``) is what ``__all__`` lists and what the TYPE_CHECKING block imports for type
    checkers: a name added to one and not the others fails here."""
    import occubench
    tree = ast.parse(Path(occubench.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in ast.walk(block) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert imported == occubench._EXPORTS


def test_commands_that_call_no_model_do_not_import_openai() -> None:
    code = ("import sys\nfrom occubench.cli import main\nimport occubench.report\n"
            "for argv in (['suites'], ['validate', '--suite', 'workplace', '--days', '1']):\n"
            "    assert main(argv) == 0\n"
            "print(sorted(m for m in ('openai', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_import_occubench_installs_no_import_hook_and_old_module_names_are_gone() -> None:
    code = ("import sys\nbefore = list(sys.meta_path)\nimport occubench\nassert sys.meta_path == before\n"
            "try:\n    import occubench.faults\nexcept ModuleNotFoundError:\n    print('gone')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "gone"
