"""Every parser of a header, a file or a string takes time linear in its input.

Each family times a hostile input of size n and of size 4n in the same run (the least of three
tries each, interleaved): a linear parser takes about 4 times as long on the larger, a quadratic
one about 16 times. Each also checks that the input is refused with the right message, or read
as it should be.
"""

import contextlib
import io
import json
import math
import re
import time
import zipfile

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _cli, _model_file
from mlsom.datasets import ArffError, load_arff

RATIO = 8.0  # linear: about 4; quadratic: about 16


def outcome(parse, arg, expected):
    """What ``parse(arg)`` gives: its result, or the ``expected`` exception it raises."""
    try:
        return parse(arg)
    except expected as exc:
        return exc


def _best_times(parse, small, large, expected):
    """The least time of three tries of ``parse`` on each of ``small`` and ``large``
    (interleaved, so that a slower moment of the machine falls on both)."""
    best = {"small": math.inf, "large": math.inf}
    for _ in range(3):
        for name, arg in (("small", small), ("large", large)):
            t0 = time.perf_counter()
            outcome(parse, arg, expected)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best["small"], best["large"]


def assert_linear(parse, make, n, check, expected=()):
    """``parse`` on ``make(n)`` and ``make(4 * n)``: ``check`` passes on each outcome, and the
    larger takes less than RATIO times as long (measured again once if not: other processes
    share the machine; a quadratic time fails both)."""
    small, large = make(n), make(4 * n)
    for arg in (small, large):
        check(outcome(parse, arg, expected))
    for _ in range(2):
        t_small, t_large = _best_times(parse, small, large, expected)
        ratio = t_large / t_small
        if ratio < RATIO:
            break
    assert ratio < RATIO, (
        f"n={n}: {t_small * 1e3:.1f} ms, 4n: {t_large * 1e3:.1f} ms (ratio {ratio:.1f}: not linear)"
    )


def refused(exc_type, *patterns):
    """A check: the outcome is an ``exc_type`` whose message holds each of ``patterns``."""

    def check(result):
        assert isinstance(result, exc_type), f"accepted: {str(result)[:200]}"
        for p in patterns:
            assert p in str(result), str(result)[:500]

    return check


def accepted(predicate):
    """A check: the outcome is no error, and ``predicate`` holds for it."""

    def check(result):
        assert not isinstance(result, Exception), f"refused: {str(result)[:500]}"
        assert predicate(result)

    return check


def _is_repeated(text, unit):
    return len(text) > len(unit) and text == unit * (len(text) // len(unit))


# ------------------------------------------------------------------------------ model files


def _saved_model(tmp_path, n_features, name="m.npz"):
    """A model fitted on ``n_features`` features, saved; (path, meta, arrays) of its file."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, n_features))
    Y = (rng.random((60, 2)) < 0.5).astype(np.uint8)
    Y[~Y.any(axis=1), 0] = 1
    path = tmp_path / name
    SOMStreamClassifier(grid_size=2, random_state=0).fit(X, Y).save(path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files if k != "meta"}
        meta = json.loads(str(f["meta"]))
    return path, meta, arrays


def _with_header(path, text, arrays):
    """Rewrite the model file at ``path`` with the JSON header ``text``."""
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(text), **arrays)
    assert zipfile.is_zipfile(path)
    return path


@pytest.fixture(scope="module")
def wide_model(tmp_path_factory):
    # 6000 features: headers of up to 65,536 + 6000 * 1024 characters
    return _saved_model(tmp_path_factory.mktemp("wide"), 6000)


def test_the_review_case_is_refused_as_an_unterminated_string(tmp_path):
    """A 200-feature file whose header is a quote and 135,000 escaped quotes: refused, naming the
    file (in linear time: test_model_header_checks_take_linear_time["unterminated"])."""
    path, _, arrays = _saved_model(tmp_path, 200)
    _with_header(path, '"' + '\\"' * 135_000, arrays)
    with pytest.raises(ValueError) as info:
        SOMStreamClassifier.load(path)
    message = str(info.value)
    assert repr(str(path)) in message
    assert "unterminated string from character 0" in message
    assert "a header of 270001 characters ends inside a string" in message


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"a": ["[[[[[[[[[", "{\\"{{{{{{{{"]}', None),  # brackets in strings do not nest
        ('["a\\\\", [1]]', None),  # an escaped backslash, then the closing quote
        ("[" * 8 + "]" * 8, None),
        ("[" * 9 + "]" * 9, "a header nested 9 deep"),
        (
            '{"a": "b\\"}',
            "a header of 11 characters ends inside a string (an unterminated string "
            "from character 6)",
        ),
        ('["a", "b\\', "ends inside a string (an unterminated string from character 6)"),
        ('"', "ends inside a string (an unterminated string from character 0)"),
    ],
)
def test_the_header_scan_tells_strings_from_structure(text, problem):
    if problem is None:
        _model_file._check_depth(text)
        json.loads(text)
    else:
        with pytest.raises(ValueError, match=re.escape(problem)):
            _model_file._check_depth(text)


# (the header for a size n, given the valid header; n; check)
_HEADER_CASES = {
    # the review's case: an unterminated string of escaped quotes
    "unterminated": (
        lambda n, meta: '"' + '\\"' * n,
        200_000,
        refused(ValueError, "ends inside a string", "unterminated string from character 0"),
    ),
    # a valid header, then an unterminated string that holds escaped quotes and brackets
    "unterminated-after": (
        lambda n, meta: json.dumps(meta)[:-1] + ', "x": "' + '[\\"{' * (n // 2),
        200_000,
        refused(ValueError, "ends inside a string", "unterminated string from character"),
    ),
    "deep": (
        lambda n, meta: "[" * n + "]" * n,
        400_000,
        refused(ValueError, "inconsistent model file: a header nested", "0 deep"),
    ),
    # a valid header: a feature name of escaped quotes, backslashes and brackets
    "escapes": (
        lambda n, meta: json.dumps(
            {**meta, "feature_names": ['\\"[{' * (n // 8)] + [f"f{i}" for i in range(1, 6000)]}
        ),
        600_000,
        accepted(lambda model: _is_repeated(model.feature_names_in_[0], '\\"[{')),
    ),
}


@pytest.mark.parametrize("kind", list(_HEADER_CASES))
def test_model_header_checks_take_linear_time(tmp_path, wide_model, kind):
    build, n, check = _HEADER_CASES[kind]
    _, meta, arrays = wide_model

    def make(size):
        return _with_header(tmp_path / f"{kind}-{size}.npz", build(size, meta), arrays)

    assert_linear(SOMStreamClassifier.load, make, n, check, expected=ValueError)


# ------------------------------------------------------------------------------ ARFF headers

_TAIL = "@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n"
_NOMINAL_TAIL = "@attribute y {0,1}\n@data\n%s,1\n"
_ESC = "\\'"  # an escaped quote in a quoted name


def _names(n, fmt):
    return ",".join(fmt.format(i) for i in range(n))


# (the file for a size n; n; check)
_ARFF_CASES = {
    # a quoted relation name of escaped quotes
    "relation-escapes": (
        lambda n: "@relation '" + _ESC * n + "'\n" + _TAIL,
        20_000,
        accepted(lambda ds: _is_repeated(ds.relation, "'")),
    ),
    # a quoted attribute name of escaped quotes that is never closed
    "name-unterminated": (
        lambda n: "@relation r\n@attribute '" + _ESC * n + " numeric\n" + _TAIL,
        600_000,
        refused(ArffError, "line 2: unterminated ' quote in name"),
    ),
    # a nominal attribute of many values
    "nominal-values": (
        lambda n: "@relation r\n@attribute a {" + _names(n, "v{}") + "}\n" + _NOMINAL_TAIL % "v0",
        6_000,
        accepted(lambda ds: ds.feature_names[-1].startswith("a=v") and ds.X[0, 0] == 1),
    ),
    # ... quoted, with escapes
    "nominal-quoted": (
        lambda n: (
            "@relation r\n@attribute a {"
            + _names(n, "'\\'\\\\{}\\''")
            + "}\n"
            + _NOMINAL_TAIL % "'\\'\\\\0\\''"
        ),
        3_000,
        accepted(lambda ds: ds.feature_names[0] == "a='\\0'" and ds.X[0, 0] == 1),
    ),
    # ... then a quote never closed, of escaped quotes and commas
    "nominal-unterminated": (
        lambda n: (
            "@relation r\n@attribute a {"
            + _names(n, "v{}")
            + ",'"
            + "\\'," * (4 * n)
            + "}\n"
            + _TAIL
        ),
        20_000,
        refused(ArffError, "line 2: unterminated ' quote"),
    ),
    # a line of megabytes (read in many blocks of the file)
    "long-comment": (
        lambda n: "@relation r\n% " + "'%{" * (n // 3) + "\n" + _TAIL,
        3_000_000,
        accepted(lambda ds: ds.relation == "r"),
    ),
    # many attribute lines
    "attributes": (
        lambda n: (
            "@relation r\n"
            + "".join(f"@attribute a{i} numeric\n" for i in range(n))
            + "@attribute y {0,1}\n@data\n"
            + "1," * n
            + "0\n"
        ),
        2_000,
        accepted(lambda ds: ds.feature_names[:2] == ("a0", "a1") and ds.X.all()),
    ),
}


@pytest.mark.parametrize("kind", list(_ARFF_CASES))
def test_arff_headers_take_linear_time(tmp_path, kind):
    build, n, check = _ARFF_CASES[kind]

    def make(size):
        path = tmp_path / f"{kind}-{size}.arff"
        path.write_text(build(size), encoding="utf-8")
        return path

    def parse(path):
        return load_arff(
            path, label_location=("last", 1), nominal="onehot", max_line_length=50_000_000
        )

    assert_linear(parse, make, n, check, expected=ArffError)


# ------------------------------------------------------------------------------ Mulan XML files

_XML_ARFF = "@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n"
_XML_HEAD = (
    '<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
)

# (the XML file of size n; n; check)
_XML_CASES = {
    # a label name of n characters, not an attribute of the data (one token: expat parses a
    # token it has not seen the end of again at each read of the file)
    "long-name": (
        lambda n: _XML_HEAD + '<label name="' + "&lt;" * (n // 4) + '"/>\n</labels>\n',
        200_000,
        refused(ArffError, "line 3: label '<<<", "is not an attribute of"),
    ),
    # a value never closed: refused once longer than any tag of a labels file
    "unterminated": (
        lambda n: _XML_HEAD + '<label name="' + "y" * n,
        3_000_000,
        refused(ArffError, "line 3: invalid XML: a tag, comment or declaration longer than"),
    ),
    # comments that hold tags, and text, around the label
    "comments": (
        lambda n: (
            _XML_HEAD
            + "<!--<label name='x'>-->text" * (n // 27)
            + '<label name="y"/>'
            + "text" * (n // 4)
            + "</labels>"
        ),
        1_000_000,
        accepted(lambda ds: ds.label_names == ("y",)),
    ),
    # many labels, one of them repeated at the end
    "many-labels": (
        lambda n: (
            _XML_HEAD
            + "".join(f'<label name="l{i}"/>\n' for i in range(n))
            + '<label name="l0"/></labels>'
        ),
        5_000,
        refused(ArffError, "label 'l0' is listed twice (lines 3 and"),
    ),
}


@pytest.mark.parametrize("kind", list(_XML_CASES))
def test_xml_label_files_take_linear_time(tmp_path, kind):
    build, n, check = _XML_CASES[kind]
    arff = tmp_path / "data.arff"
    arff.write_text(_XML_ARFF, encoding="utf-8")

    def make(size):
        path = tmp_path / f"{kind}-{size}.xml"
        path.write_text(build(size), encoding="utf-8")
        return path

    assert_linear(lambda xml: load_arff(arff, xml=xml), make, n, check, expected=ArffError)


# ------------------------------------------------------------------------------ command line


_PARSER = _cli._parser()


def _parse_argv(argv):
    return _PARSER.parse_args(argv)


_RUN = ["run", "--stream", "yeast"]

# (the arguments of size n; n; check)
_CLI_CASES = {
    "seed-digits": (
        lambda n: [*_RUN, "--seed", "1" * n],
        2_000_000,
        refused(_cli.UsageError, "argument --seed: expected an integer, got '111"),
    ),
    "seed-blanks": (
        lambda n: [*_RUN, "--seed", " " * n + "7" + " " * n],
        6_000_000,
        accepted(lambda args: args.seed == 7),
    ),
    "grid-size-zeros": (
        lambda n: [*_RUN, "--grid-size", "0" * n + "4"],
        2_000_000,
        refused(_cli.UsageError, "argument --grid-size: expected an integer or auto"),
    ),
    "windows-separators": (
        lambda n: [*_RUN, "--windows", "1_" * n + "1"],
        1_000_000,
        refused(_cli.UsageError, "argument --windows: expected an integer"),
    ),
    "label-fraction-digits": (
        lambda n: [*_RUN, "--label-fraction", "0." + "5" * n],
        8_000_000,
        accepted(lambda args: abs(args.label_fraction - 5 / 9) < 1e-15),
    ),
    "connect-timeout-exponent": (
        lambda n: ["experiment", "--connect-timeout", "1e" + "0" * n + "1"],
        8_000_000,
        accepted(lambda args: args.connect_timeout == 10.0),
    ),
    "stream-unknown": (
        lambda n: ["run", "--stream", "yeast" * (n // 5)],
        2_000_000,
        refused(_cli.UsageError, "argument --stream: unknown stream 'yeastyeast"),
    ),
    "stream-blanks": (
        lambda n: ["run", "--stream", " " * n + "Yeast" + " " * n],
        6_000_000,
        accepted(lambda args: args.stream == "Yeast"),
    ),
    "method-unknown": (
        lambda n: [*_RUN, "--method", "m" * n],
        4_000_000,
        refused(_cli.UsageError, "argument --method: unknown method 'mmm"),
    ),
    "zero-division": (
        lambda n: [*_RUN, "--zero-division", "0" * n],
        2_000_000,
        refused(_cli.UsageError, "argument --zero-division: must be 1, 0, exclude or mulan"),
    ),
    "out-blank": (
        lambda n: [*_RUN, "--out", " " * n],
        8_000_000,
        refused(_cli.UsageError, "argument --out: must not be empty"),
    ),
    "seed-list": (
        lambda n: ["experiment", "--seeds", *map(str, range(n))],
        5_000,
        accepted(lambda args: args.seeds == list(range(len(args.seeds))) != []),
    ),
    "many-options": (
        lambda n: [*_RUN] + ["--seed", "1"] * n,
        50_000,
        refused(_cli.UsageError, "too many options", "arguments start with '-'"),
    ),
}


@pytest.mark.parametrize("kind", list(_CLI_CASES))
def test_command_line_values_take_linear_time(kind):
    build, n, check = _CLI_CASES[kind]
    assert_linear(_parse_argv, build, n, check, expected=_cli.UsageError)


# (the --param items for a size n; n; check)
_PARAM_CASES = {
    # a JSON string never closed, of escaped quotes: taken as text
    "unterminated": (
        lambda n: ["a=" + '"' + '\\"' * n],
        1_000_000,
        accepted(lambda params: _is_repeated(params["a"][1:], '\\"')),
    ),
    "list": (
        lambda n: ["a=[" + '2.5, "\\"", ' * n + "0]"],
        40_000,
        accepted(lambda params: params["a"][:2] == [2.5, '"']),
    ),
    "repeated": (
        lambda n: [f"k{i}=1" for i in range(n)] + ["k0=2"],
        6_000,
        refused(ValueError, "--param k0 is given twice"),
    ),
}


@pytest.mark.parametrize("kind", list(_PARAM_CASES))
def test_param_values_take_linear_time(kind):
    build, n, check = _PARAM_CASES[kind]
    assert_linear(_cli._parse_params, build, n, check, expected=ValueError)


def test_label_lists_are_counted_before_they_are_combined(tmp_path):
    """--label-fractions and --label-delays of n values each: refused (more runs than an
    experiment plans) in a time linear in n, not in n * n."""

    def experiment(argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = _cli.main(argv)
        return status, err.getvalue()

    def make(n):
        fractions = [f"{(i + 1) / (n + 1):.9f}" for i in range(n)]
        delays = [str(i) for i in range(n)]
        out = str(tmp_path / "out")
        return [
            "experiment",
            "--label-fractions",
            *fractions,
            "--label-delays",
            *delays,
            "--out",
            out,
        ]

    def check(result):
        status, err = result
        assert status == 2, err
        assert "label settings); at most 100000 are planned at once" in err, err

    assert_linear(experiment, make, 700, check)
