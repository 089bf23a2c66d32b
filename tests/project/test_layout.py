"""The test suite's layout (tests/README.md): every test module lives in the folder of its area,
no test module imports another (what two share lives in tests/helpers), and the NumPy reference
imports as ``tests.helpers.reference`` with nothing added to the module path."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT, TESTS

AREAS = {
    "core",
    "estimator",
    "model_file",
    "datasets",
    "evaluation",
    "experiment",
    "cli",
    "hostile",
    "interop",
    "project",
}


def _test_modules():
    return sorted(TESTS.rglob("test_*.py"))


def _imported(path):
    """The dotted names of every module ``path`` imports (``from X import Y``: X and X.Y)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{alias.name}" if node.module else base + alias.name
                         for alias in node.names)  # fmt: skip
    return names


def test_every_test_module_is_in_an_area_folder():
    modules = _test_modules()
    assert len(modules) > 50
    misplaced = [str(p.relative_to(TESTS)) for p in modules if p.parent.parent != TESTS
                 or p.parent.name not in AREAS]  # fmt: skip
    assert not misplaced, f"test modules outside an area folder of tests/README.md: {misplaced}"
    for area in AREAS:
        assert (TESTS / area / "__init__.py").is_file(), area


def test_no_test_module_imports_another():
    offending = {}
    for path in _test_modules():
        parts = {n: n.lstrip(".").split(".") for n in _imported(path)}
        bad = sorted(n for n, p in parts.items() if any(q.startswith("test_") for q in p))
        if bad:
            offending[str(path.relative_to(TESTS))] = bad
    for path in (TESTS / "helpers").glob("*.py"):
        bad = sorted(n for n in _imported(path) if "test_" in n)
        if bad:
            offending[str(path.relative_to(TESTS))] = bad
    assert not offending, f"move what they share to tests/helpers: {offending}"


def test_the_check_finds_an_import_of_a_test_module(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text("from tests.core.test_reference import x\nimport test_labels\nfrom . import y")
    found = _imported(path)
    assert "tests.core.test_reference" in found and "test_labels" in found and ".y" in found


def test_no_test_module_edits_the_module_path():
    modules = [*_test_modules(), *(TESTS / "helpers").glob("*.py")]
    edits = [
        str(p.relative_to(TESTS))
        for p in modules
        if "sys.path" in p.read_text(encoding="utf-8") and p.name != "test_layout.py"
    ]
    assert not edits, f"modules that edit sys.path: {edits}"


def test_the_reference_imports_from_the_root_without_path_edits():
    """From the folder above tests/ (the repository's root, or the copy of tests/ that .ci/run
    makes), a plain interpreter imports the reference as a module of the tests package."""
    code = "import tests.helpers.reference as r, sys; print(r.__file__); print(sys.path[0])"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    where = Path(out.stdout.splitlines()[0]).resolve()
    assert where == TESTS / "helpers" / "reference.py"
