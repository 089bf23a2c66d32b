"""The marked code blocks of README.md and docs/*.md run, and print what the pages show.

A page marks a fenced block with an HTML comment (invisible where the page is rendered) on the
line before it:

* ``<!-- doc-test -->`` before a ``python`` block: run it. The marked blocks of one page run in
  order, in one namespace (a page builds on its earlier blocks), in a fresh temporary folder.
* ``<!-- doc-test -->`` before a ``console`` block: run each ``$ mlsom ...`` line (the command
  line, in this process) and compare what it prints (stdout, then stderr) with the lines below it.
* ``<!-- doc-output -->`` before a ``text`` block: compare the block, line by line, with what the
  page's marked python blocks printed since the previous ``doc-output`` block.
* ``<!-- doc-output: $ mlsom demo -->``: compare it with what that command prints instead.

Options, after a colon, separated by ``;``: ``ignore-timings`` (durations and rates, a number
followed by ``s``, ``ms``, ``µs``, ``min``, ``h``, ``instances/s`` or ``rows/s``, are not compared:
only where a page shows a timing), ``ignore-version`` (the version after ``mlsom `` is not
compared), ``needs MODULE`` (the page is skipped where MODULE cannot be imported). A block that a
page shows but does not mark is not run: a long run, a machine's own output, an excerpt.
"""

import contextlib
import difflib
import importlib.util
import io
import re
import shlex
import sys
from dataclasses import dataclass, field

import pytest

from mlsom._cli import main
from tests.helpers.paths import ROOT

MARK = re.compile(r"<!--\s*doc-(test|output)\s*(?::(.*?))?-->")
FENCE = re.compile(r"(`{3,})\s*([\w-]*)\s*$")
TIMING = re.compile(r"\d[\d,]*(?:\.\d+)?\s*(?:µs|us|ms|min|h|s|instances/s|rows/s)(?![\w/])")
VERSION = re.compile(r"(?<=mlsom )\d+\.\d+\S*")
FLAGS = {"ignore-timings", "ignore-version"}
LANGUAGES = {"test": {"python", "console"}, "output": {"text"}}

# the pages whose code blocks must stay marked (the list); others may mark blocks too
MUST_MARK = ("README.md", "docs/sklearn.md", "docs/river.md", "docs/evaluation.md",
             "docs/your-data.md")  # fmt: skip


@dataclass
class Block:
    kind: str  # "test" or "output"
    language: str
    line: int  # the line of the block's first content line, counted from 1
    text: str
    flags: set = field(default_factory=set)
    needs: list = field(default_factory=list)
    command: str | None = None


def _options(text, where):
    """The options of a marker: its flags, the modules it needs, the command it shows."""
    flags, needs, command = set(), [], None
    for option in filter(None, (o.strip() for o in (text or "").split(";"))):
        if option in FLAGS:
            flags.add(option)
        elif option.startswith("needs "):
            needs.append(option[len("needs ") :].strip())
        elif option.startswith("$ "):
            command = option[2:].strip()
        else:
            raise ValueError(f"{where}: unknown option {option!r} of a doc-test/doc-output marker")
    return flags, needs, command


def marked_blocks(text, name):
    """The marked blocks of a page, in order. A marker must be followed (blank lines aside) by a
    fenced block of its kind's languages; anything else is a ValueError naming the line."""
    lines = text.splitlines()
    blocks, pending, i = [], None, 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence[1]), None)
            if end is None:
                raise ValueError(f"{name}:{i + 1}: a code block that is never closed")
            if pending:
                kind, opts, where = pending
                if fence[2] not in LANGUAGES[kind]:
                    raise ValueError(f"{where}: doc-{kind} marks a {fence[2] or 'plain'} block")
                body = "\n".join(lines[i + 1 : end])
                blocks.append(Block(kind, fence[2], i + 2, body, *opts))
                pending = None
            i = end + 1
            continue
        mark = MARK.fullmatch(lines[i].strip())  # a line of its own: prose may quote a marker
        if (mark or lines[i].strip()) and pending:
            raise ValueError(f"{pending[2]}: a marker not followed by a code block")
        if mark:
            where = f"{name}:{i + 1}"
            pending = (mark[1], _options(mark[2], where), where)
            if pending[0] == "test" and pending[1][2] is not None:
                raise ValueError(f"{where}: a command belongs to doc-output, not doc-test")
        i += 1
    if pending:
        raise ValueError(f"{pending[2]}: a marker not followed by a code block")
    return blocks


def normalized(text, flags):
    """``text`` as compared: trailing spaces and blank lines at either end dropped, and the
    parts that the flags say may vary masked."""
    if "ignore-timings" in flags:
        text = TIMING.sub("<timing>", text)
    if "ignore-version" in flags:
        text = VERSION.sub("<version>", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _difference(expected, actual, flags, where):
    """None when the two agree, else a message with their differences."""
    want, got = normalized(expected, flags), normalized(actual, flags)
    if want == got:
        return None
    diff = difflib.unified_diff(
        want.splitlines(), got.splitlines(), "the page", "what ran", lineterm=""
    )
    return f"{where}: the page shows another output than the code prints\n" + "\n".join(diff)


def run_command(command):
    """What ``mlsom ...`` prints (stdout, then stderr), run in this process."""
    words = shlex.split(command)
    if words[:1] != ["mlsom"]:
        raise ValueError(f"only mlsom commands run: {command!r}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(words[1:])
    return out.getvalue() + err.getvalue()


def _console(block, where):
    """The differences between a console block's outputs and what its commands print."""
    problems, lines = [], block.text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    if not starts or starts[0] != 0:
        raise ValueError(f"{where}: a console block starts with a '$ ' command line")
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        expected = "\n".join(lines[start + 1 : stop])
        actual = run_command(lines[start][2:])
        problem = _difference(expected, actual, block.flags, f"{where} ({lines[start]})")
        if problem:
            problems.append(problem)
    return problems


def run_page(text, name, filename=None):
    """Run a page's marked blocks; the list of differences between what the page shows and what
    ran (empty when they agree)."""
    namespace, printed, problems = {"__name__": "doc_blocks"}, io.StringIO(), []
    for block in marked_blocks(text, name):
        where = f"{name}:{block.line}"
        if block.kind == "test" and block.language == "python":
            # padded so that a traceback names the page's own line numbers
            code = compile("\n" * (block.line - 1) + block.text, filename or name, "exec")
            with contextlib.redirect_stdout(printed):
                exec(code, namespace)
        elif block.kind == "test":
            problems += _console(block, where)
        else:
            if block.command is None:
                actual, printed = printed.getvalue(), io.StringIO()
            else:
                actual = run_command(block.command)
            problem = _difference(block.text, actual, block.flags, where)
            if problem:
                problems.append(problem)
    return problems


def _pages():
    """The pages that may mark blocks (none in a copy of tests/ without the docs)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [p for p in pages if p.is_file() and (ROOT / "docs").is_dir()]


def _name(path):
    return path.relative_to(ROOT).as_posix()


def _marked_pages():
    return [_name(p) for p in _pages() if MARK.search(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("name", _marked_pages() or [pytest.param(None, marks=pytest.mark.skip(
    reason="no docs here (a copy of tests/ run against an installed package)"))])  # fmt: skip
def test_a_pages_marked_blocks_print_what_it_shows(name, tmp_path, monkeypatch):
    text = (ROOT / name).read_text(encoding="utf-8")
    for block in marked_blocks(text, name):
        for module in block.needs:
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{name} needs {module}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    try:
        problems = run_page(text, name, filename=str(ROOT / name))
    finally:
        if "matplotlib.pyplot" in sys.modules:  # the figures a page made
            sys.modules["matplotlib.pyplot"].close("all")
    assert not problems, "\n\n".join(problems)


def test_every_marker_is_well_formed_and_the_main_pages_mark_their_blocks():
    pages = _pages()
    if not pages:
        pytest.skip("no docs here (a copy of tests/ run against an installed package)")
    marked = {}
    for page in pages:
        blocks = marked_blocks(page.read_text(encoding="utf-8"), _name(page))
        marked[_name(page)] = {b.kind for b in blocks}
    for name in MUST_MARK:
        assert marked.get(name, set()) == {"test", "output"}, f"{name} has no marked block"


PAGE = """# A page

<!-- doc-test -->
```python
total = 0.1 + 0.2
print(f"sum {total:.4f}")
```

Unmarked, never run nor compared:

```python
print("not run")
```

<!-- doc-output -->
```text
sum 0.3000
```

<!-- doc-test -->
```python
print(f"sum again {total:.2f}, fit 0.07 s, stream 1.5 ms (368,510 instances/s)")
```

<!-- doc-output: ignore-timings -->
```text
sum again 0.30, fit 0.12 s, stream 3 ms (12 instances/s)
```
"""


def test_the_check_passes_a_page_that_shows_what_it_prints():
    assert run_page(PAGE, "page.md") == []


@pytest.mark.parametrize(
    ("old", "new", "line", "shown"),
    [
        ("sum 0.3000", "sum 0.3001", 17, "-sum 0.3001\n+sum 0.3000"),
        ("again 0.30", "again 0.31", 27, "-sum again 0.31, fit <timing>,"),
        ("0.12 s,", "0.12 s;", 27, "-sum again 0.30, fit <timing>; stream"),
    ],
)
def test_a_changed_number_or_word_fails_even_among_masked_timings(old, new, line, shown):
    problems = run_page(PAGE.replace(old, new, 1), "page.md")
    assert len(problems) == 1
    assert problems[0].startswith(f"page.md:{line}: ") and shown in problems[0]


def test_only_timings_and_the_version_are_masked():
    line = "mlsom 1.2.3.dev0 demo: 0.8674 over 18000 instances, fit 0.07 s (265,161 instances/s)"
    assert normalized(line, {"ignore-timings", "ignore-version"}) == (
        "mlsom <version> demo: 0.8674 over 18000 instances, fit <timing> (<timing>)"
    )
    assert normalized(line, set()) == line
    assert (
        normalized("5 labels, 2 streams, 3 seeds", {"ignore-timings"})
        == "5 labels, 2 streams, 3 seeds"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- doc-test -->\nprose\n```python\nx = 1\n```\n", "page.md:1: a marker not followed"),
        ("<!-- doc-test -->\n```text\nx\n```\n", "page.md:1: doc-test marks a text block"),
        ("<!-- doc-output: ignore-time -->\n```text\nx\n```\n", "unknown option 'ignore-time'"),
        ("<!-- doc-test: $ mlsom info -->\n```python\nx = 1\n```\n", "a command belongs"),
        ("<!-- doc-test -->\n", "page.md:1: a marker not followed"),
        ("<!-- doc-test -->\n```python\nx = 1\n", "page.md:2: a code block that is never closed"),
    ],
)
def test_a_malformed_marker_is_refused_naming_its_line(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        marked_blocks(text, "page.md")


def test_a_marker_quoted_in_prose_is_not_a_marker():
    text = "Mark a block with `<!-- doc-test -->` on the line before it.\n\n```python\nx = 1\n```\n"
    assert marked_blocks(text, "page.md") == []


def test_a_console_block_runs_its_commands_and_compares_each_output():
    page = "<!-- doc-test -->\n```console\n$ mlsom run --stream No-such\n{}\n```\n"
    shown = run_command("mlsom run --stream No-such")
    assert shown.startswith("mlsom: error: ") and "No-such" in shown
    assert run_page(page.format(shown.strip()), "page.md") == []
    assert len(run_page(page.format("mlsom: error: another"), "page.md")) == 1
