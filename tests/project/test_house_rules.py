"""House rules for the package's Python code, checked on the source with ``ast``.

* No private name (``_name``, not a dunder) is imported from another module of the package:
  what several modules share is a public name of a (private) module.
* No function is longer than 100 lines, counted from its ``def`` to its last line, docstring
  included (as a reader measures it).
* Imports are at the top of the module, except of optional dependencies (and of platform
  modules that may be absent), and except the imports listed here with their reason.

The allow-lists below name each exception; an entry that no longer matches anything fails too,
so that the lists only shrink.
"""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "mlsom"
MAX_LINES = 100

# Top-level packages that a function may import where it needs them: optional dependencies
# (the runtime core needs only NumPy) and platform modules that may be absent.
OPTIONAL = {
    "atheris",
    "dask",
    "distributed",
    "joblib",
    "matplotlib",
    "pandas",
    "river",
    "scipy",
    "sklearn",
    "threadpoolctl",
    "tqdm",
    "ctypes",  # the Windows memory query
    "resource",  # absent on Windows
}

# Private names imported across modules. (file, imported module, name).
PRIVATE_IMPORTS_ALLOWED = set()

# Temporary: functions over the limit, being split. (file, function).
LONG_ALLOWED = set()

# Function-local imports of the package's own modules. (file, function, module): reason.
LOCAL_IMPORTS_ALLOWED = {
    # mlsom._version is written at build time; the estimator reads it when it saves.
    ("_som.py", "_version", "mlsom._version"): "excluded file, being rebuilt",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        yield rel, ".".join(parts), is_package, ast.parse(path.read_text(encoding="utf-8"))


def _resolve(module, is_package, node):
    """The absolute module an ImportFrom node imports from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_module(dotted):
    """Whether ``dotted`` names a module of the package (``from . import _core`` imports one)."""
    path = SRC.joinpath(*dotted.split("."))
    return (
        path.with_suffix(".py").exists()
        or (path / "__init__.py").exists()
        or path.with_suffix(".pyx").exists()
    )


def _is_private(name):
    return name.startswith("_") and not name.startswith("__")


def _total_lines(function):
    """Lines of ``function`` from its ``def`` to its last line, docstring included."""
    return function.end_lineno - function.lineno + 1


def _functions_and_imports(tree):
    """Every function with its length, and every import with its enclosing function (or None)."""
    functions, imports = [], []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((child, _total_lines(child)))
                visit(child, child)
            else:
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    imports.append((child, function))
                visit(child, function)

    visit(tree, None)
    return functions, imports


def _findings():
    private, long, local = [], [], []
    used_private, used_long, used_local = set(), set(), set()
    for rel, module, is_package, tree in _modules():
        functions, imports = _functions_and_imports(tree)
        for node, n_lines in functions:
            if n_lines > MAX_LINES:
                key = (rel, node.name)
                if key in LONG_ALLOWED:
                    used_long.add(key)
                else:
                    long.append((rel, node.lineno, f"{node.name} ({n_lines} lines)"))
        for node, function in imports:
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node)
                targets = [source]
                if source.split(".")[0] == "mlsom" and source != module:
                    for alias in node.names:
                        if _is_private(alias.name) and not _is_module(f"{source}.{alias.name}"):
                            key = (rel, source, alias.name)
                            if key in PRIVATE_IMPORTS_ALLOWED:
                                used_private.add(key)
                            else:
                                private.append((rel, node.lineno, f"{source}.{alias.name}"))
            else:
                targets = [alias.name for alias in node.names]
            if function is None:
                continue
            for target in targets:
                if target.split(".")[0] in OPTIONAL:
                    continue
                key = (rel, function.name, target)
                if key in LOCAL_IMPORTS_ALLOWED:
                    used_local.add(key)
                else:
                    local.append((rel, node.lineno, f"{target} in {function.name}"))
    stale = (
        sorted(PRIVATE_IMPORTS_ALLOWED - used_private)
        + sorted(LONG_ALLOWED - used_long)
        + sorted(set(LOCAL_IMPORTS_ALLOWED) - used_local)
    )
    return private, long, local, stale


FINDINGS = _findings()


def _listing(findings):
    return "\n".join(f"  {file}:{line}: {what}" for file, line, what in findings)


def test_no_private_name_is_imported_from_another_module():
    private = FINDINGS[0]
    assert not private, "private names imported across modules:\n" + _listing(private)


def test_no_function_is_longer_than_100_lines():
    long = FINDINGS[1]
    assert not long, f"functions over {MAX_LINES} lines:\n" + _listing(long)


def test_imports_are_at_the_top_of_the_module():
    local = FINDINGS[2]
    assert not local, "function-local imports of required modules:\n" + _listing(local)


def test_the_allow_lists_name_only_what_still_needs_them():
    stale = FINDINGS[3]
    assert not stale, f"allow-list entries that match nothing (remove them): {stale}"


def test_the_checks_find_what_they_look_for():
    tree = ast.parse(
        "from ._validation import _hidden, public\n"
        "def f():\n"
        '    """Two lines\n    of docstring."""\n'
        "    import json\n"
        "    import scipy\n" + "    x = 1\n" * MAX_LINES
    )
    functions, imports = _functions_and_imports(tree)
    assert [(n.name, size) for n, size in functions] == [("f", MAX_LINES + 5)]
    local = [(n.names[0].name, f.name) for n, f in imports if f is not None]
    assert local == [("json", "f"), ("scipy", "f")]
    node = imports[0][0]
    assert _resolve("mlsom.stats", False, node) == "mlsom._validation"
    assert _resolve("mlsom.datasets", True, node) == "mlsom.datasets._validation"
    assert [a.name for a in node.names if _is_private(a.name)] == ["_hidden"]
    assert _is_module("mlsom._core") and _is_module("mlsom.datasets")
    assert not _is_module("mlsom._validation.describe")
