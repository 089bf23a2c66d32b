"""Limits of the compiled core, measured on its sources.

* No file of the core (``_core.pyx``, ``_core_*.pxi``, ``_kernels.pxd``, ``_kernels*.h``) is
  longer than 1,200 lines.
* No definition is longer than 120 lines: a Cython ``def``/``cdef``/``ctypedef``/``cdef class``
  from its first line to its last indented line, a C function from its signature to its closing
  brace.
* No entry point (a ``def`` of the extension, what Python calls) takes more than 10 parameters:
  they take the state object, the call's settings and the data.
"""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "mlsom"
MAX_FILE = 1200
MAX_DEFINITION = 120
MAX_PARAMETERS = 10

_CYTHON_START = re.compile(r"(cpdef|def|ctypedef|cdef)\b(?! (enum|extern))")
_C_START = re.compile(r"[A-Za-z_][\w\s\*]*\b(\w+)\s*\(")


def _core_files():
    files = [PACKAGE / "_core.pyx", PACKAGE / "_kernels.pxd"]
    files += sorted(PACKAGE.glob("_core_*.pxi")) + sorted(PACKAGE.glob("_kernels*.h"))
    return files


def cython_definitions(text):
    """(first line, name, length in lines, parameters or None) of each top-level definition."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if not _CYTHON_START.match(line):
            continue
        end = i + 1
        while end < len(lines) and (lines[end] == "" or lines[end].startswith((" ", "#"))):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        head = " ".join(lines[i:end])
        name = re.match(r"[\w\s\*\[\]:,]*?(\w+)\s*[\(:]", line)
        params = None
        if line.startswith("def "):
            inside = head[head.index("(") + 1 : _closing(head, head.index("("))]
            params = len([p for p in _split_top(inside) if p.strip()])
        out.append((i + 1, name.group(1) if name else line[:40], end - i, params))
    return out


def c_definitions(text):
    """(first line, name, length in lines) of each top-level C function definition: a block at
    brace depth 0 whose head (from the end of the previous top-level statement) has a
    parameter list."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    lines = [re.sub(r"//.*", "", line) for line in text.split("\n")]
    out, depth, head, cont = [], 0, None, 0
    for i, line in enumerate(lines):
        if cont > i:
            continue  # within a macro counted below
        if depth == 0 and line.startswith("#define") and line.rstrip().endswith("\\"):
            # a macro over several lines: a definition where it writes a function body
            cont = i
            while lines[cont].rstrip().endswith("\\"):
                cont += 1
            cont += 1
            if "{" in " ".join(lines[i:cont]):
                out.append((i + 1, line.split()[1].split("(")[0], cont - i))
            head = None
            continue
        if depth == 0:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                head = None
                continue
            if head is None:
                head = i
        for ch in line:
            if ch == "{":
                depth += 1
                if depth == 1:
                    opened = head
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    sig = " ".join(lines[opened : i + 1]).split("{")[0]
                    sig = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", sig)
                    name = re.search(r"(\w+)\s*\(", sig)
                    if name and "=" not in sig:
                        out.append((opened + 1, name.group(1), i - opened + 1))
        if depth == 0 and line.rstrip().endswith((";", "}")):
            head = None
    return out


def _closing(text, start):
    depth = 0
    for k in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k
    raise ValueError("unbalanced parentheses")


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def test_no_core_file_is_over_the_limit():
    long = {p.name: n for p in _core_files() if (n := len(p.read_text().splitlines())) > MAX_FILE}
    assert not long, f"core files over {MAX_FILE} lines: {long}"


def test_no_core_definition_is_over_the_limit():
    long = []
    for path in _core_files():
        text = path.read_text()
        defs = c_definitions(text) if path.suffix == ".h" else cython_definitions(text)
        long += [(path.name, d[1], d[2]) for d in defs if d[2] > MAX_DEFINITION]
    assert not long, f"definitions over {MAX_DEFINITION} lines: {long}"


def test_no_entry_point_takes_more_than_ten_parameters():
    wide = []
    for path in _core_files():
        if path.suffix in (".pyx", ".pxi"):
            for line, name, _, params in cython_definitions(path.read_text()):
                if params is not None and params > MAX_PARAMETERS:
                    wide.append((path.name, name, params))
    assert not wide, f"entry points over {MAX_PARAMETERS} parameters: {wide}"


def test_the_checks_find_what_they_measure():
    body = "\n".join(["    x = 1"] * 130)
    text = (
        f"def wide(a, b, const double[:, ::1] c, d=None):\n{body}\n\ncdef int g():\n    return 0\n"
    )
    (first, name, length, params), second = cython_definitions(text)
    assert (first, name, length, params) == (1, "wide", 131, 4)
    assert second[1:3] == ("g", 2) and second[3] is None
    c_text = (
        "#define X 1\ntypedef struct { int a; } S;\nstatic const int t[2] = {1, 2};\n"
        "static inline int\nf(int a,\n  int b)\n{\n" + "  if (a) { a++; }\n" * 130 + "}\n"
    )
    assert c_definitions(c_text) == [(4, "f", 135)]
    macro = "#define DEF(t) \\\n" + "  t x; \\\n" * 3 + "  static t g(t a) { return a; }\n"
    assert c_definitions(macro + c_text) == [(1, "DEF", 5), (9, "f", 135)]
    # the core's sources are found and parsed
    names = {
        d[1] for p in _core_files() if p.suffix == ".pxi" for d in cython_definitions(p.read_text())
    }
    assert {"stream", "partial_fit", "predict", "State"} <= names
