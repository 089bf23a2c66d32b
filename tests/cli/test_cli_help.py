"""The command line's --help: every option explained with its default, plain text that an
80-column terminal shows whole, and every command and option in the README's "Command line"
section (skipped where the README is not beside the tests, as in CI's copy of tests/ alone)."""

import argparse
import re
import shlex

import pytest

from mlsom._cli import _parser, main
from tests.helpers.paths import ROOT

COMMANDS = ["demo", "run", "experiment", "info"]

# reStructuredText roles, literals and emphasis, Markdown code and emphasis
MARKUP = re.compile(r"``|`|:(func|mod|class|meth|attr|data|obj|ref|doc):|\*\*?\w[^*\n]*\*")

README = ROOT / "README.md"


def _subparsers(parser):
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def _parsers():
    """(name, parser) of the top level ("mlsom") and of every command."""
    top = _parser()
    return [("mlsom", top), *_subparsers(top).choices.items()]


PARSERS = [name for name, _ in _parsers()]


def _get(name):
    return dict(_parsers())[name]


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    # argparse wraps to the terminal's width, read from COLUMNS when it is set
    monkeypatch.setenv("COLUMNS", "80")


def _options(parser):
    return [
        a
        for a in parser._actions
        if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))
    ]


def _entries(help_text):
    """{option string: its entry in the rendered help, whitespace collapsed}."""
    entries, current = {}, None
    for line in help_text.splitlines():
        if re.match(r"  -", line):  # an option's first line
            invocation = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            current = []
            for part in invocation.split(", "):
                entries[part.split()[0]] = current
            current.append(line)
        elif current is not None and line.startswith("    ") and line.strip():
            current.append(line)  # its help, continued under it
        else:
            current = None
    return {k: " ".join(" ".join(v).split()) for k, v in entries.items()}


def test_the_commands_are_the_expected_ones():
    assert set(_subparsers(_parser()).choices) == set(COMMANDS)


def test_every_command_has_a_help_line():
    for choice in _subparsers(_parser())._choices_actions:
        assert choice.help and choice.help != argparse.SUPPRESS, choice.dest


@pytest.mark.parametrize("name", PARSERS)
def test_every_option_has_help_text(name):
    parser = _get(name)
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help and action.help.strip(), f"{name} {action.option_strings}"
        assert action.help != argparse.SUPPRESS, f"{name} {action.option_strings} is hidden"


@pytest.mark.parametrize("name", PARSERS)
def test_every_option_shows_its_default(name):
    parser = _get(name)
    entries = _entries(parser.format_help())
    for action in _options(parser):
        option = action.option_strings[0]
        assert option in entries, f"{name} {option} is not in --help"
        entry = entries[option]
        if action.required:
            assert "(required)" in entry, entry
            continue
        default = action.default
        if default is None or default is False or default is argparse.SUPPRESS:
            # said in words: what the option's absence means
            match = re.search(r"\(default: ([^)]*)", entry)
            assert match, f"{name} {option}: no default shown: {entry!r}"
            assert match.group(1).strip() not in ("", "None", "False", "==SUPPRESS=="), entry
        else:
            assert f"(default: {default}" in entry, f"{name} {option}: {entry!r}"


@pytest.mark.parametrize("name", PARSERS)
def test_help_is_plain_text_for_80_columns(name, capsys):
    argv = [] if name == "mlsom" else [name]
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    captured = capsys.readouterr()
    text = captured.out
    assert captured.err == "" and text.startswith(f"usage: mlsom {' '.join(argv)}".rstrip())
    assert text == _get(name).format_help()
    found = MARKUP.search(text)
    assert found is None, f"markup {found.group()!r} in 'mlsom {name} --help'"
    long = [line for line in text.splitlines() if len(line) > 80]
    assert long == [], long
    # no name is broken at a hyphen across two lines (MOA-\nSpher-5C-2A)
    assert not re.search(r"\w-\n", text)


def test_the_top_level_help_gives_the_exit_statuses():
    text = " ".join(_parser().format_help().split())
    for status in ("0 done", "1 an error during the work", "2 arguments refused", "130", "141"):
        assert status in text


def test_the_example_methods_in_run_help_exist():
    pytest.importorskip("sklearn")
    pytest.importorskip("river")
    from mlsom.experiment import available_methods

    entry = _entries(_get("run").format_help())["--method"]
    named = re.search(r"e\.g\. (.*?) \(", entry).group(1)
    for method in named.split(", "):
        assert method in available_methods(), method


# ------------------------------------------------------------------------------ the README


@pytest.fixture(scope="module")
def readme():
    if not README.is_file():
        pytest.skip(f"README.md is not beside the tests ({README}): tests/ runs without the repo")
    text = README.read_text(encoding="utf-8")
    if not text.startswith("# mlsom"):
        pytest.skip(f"{README} is not mlsom's README")
    return text


def _section(text, title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section '## {title}' in README.md"
    return match.group(1)


def test_every_command_is_in_the_readme(readme):
    section = _section(readme, "Command line")
    for command in COMMANDS:
        assert f"mlsom {command}" in section, command


def test_every_option_is_in_the_readmes_command_line_section(readme):
    section = _section(readme, "Command line")
    missing = []
    for name, parser in _parsers():
        for action in _options(parser):
            for option in action.option_strings:
                if not re.search(rf"{re.escape(option)}(?![\w-])", section):
                    missing.append(f"{name} {option}")
    assert missing == []
    for status in ("0", "1", "2", "130", "141"):
        assert re.search(rf"\b{status}\b", section), status


def _command_lines(text):
    """The ``mlsom ...`` command lines of the code blocks of ``text``."""
    lines = []
    for kind, block in re.findall(r"```(bash|console|sh)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if kind == "console":  # commands after a prompt, the rest is their output
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if line.startswith("mlsom "):
                lines.append(line.split("|")[0].split(" #")[0].strip())
    return lines


def test_the_readmes_commands_are_valid(readme):
    lines = _command_lines(_section(readme, "Command line"))
    lines += _command_lines(_section(readme, "Experiments"))
    assert {shlex.split(line)[1] for line in lines} >= set(COMMANDS)
    parser = _parser()
    for line in lines:
        try:
            parser.parse_args(shlex.split(line)[1:])
        except SystemExit:  # --help or --version shown as an example
            pass
        except Exception as exc:
            raise AssertionError(f"{line!r} is refused: {exc}") from None
