"""Property-based tests of the ARFF reader (load_arff, iter_arff) with Hypothesis.

* Valid files built from strategies (quoted names, dense and sparse rows, comments, blank lines,
  CRLF, compression, nominal features, missing values) read back exactly the values written.
* Arbitrary bytes, arbitrary text and damaged valid files raise only ArffError (a ValueError), or
  the ValueError of an option that does not fit the file: nothing else, never a hang.

The examples are derandomized (tests/conftest.py); HYPOTHESIS_PROFILE=explore searches longer.
"""

import bz2
import faulthandler
import gzip
import lzma
import math
import re
import string
from datetime import timedelta

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlsom.datasets import ArffError, iter_arff, load_arff  # noqa: E402

# A parse that takes longer than this on inputs of a few kilobytes is a bug (runaway regular
# expression, quadratic loop); a parse that never returns is caught by the watchdog below.
DEADLINE = timedelta(seconds=5)
WATCHDOG_SECONDS = 120


def examples(n):
    """``n`` examples under the default profile, proportionally more under a larger one."""
    return max(1, n * settings.default.max_examples // 100)


@pytest.fixture(autouse=True)
def watchdog():
    """A test of this module that hangs dumps every thread's stack and ends the process."""
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-arff")


# ------------------------------------------------------------------------------------ strategies

PLAIN_START = string.ascii_letters
PLAIN_REST = string.ascii_letters + string.digits + "_-."
# characters that force quoting, the quote characters and the backslash included
SPECIAL = " ,%{}'\"\\\t=?@"
NAME_ALPHABET = string.ascii_letters + string.digits + "_-." + SPECIAL + "\u00e9\u4e2d"


def quote_name(name, quote):
    escaped = name.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{quote}{escaped}{quote}"


def write_name(name, quote):
    plain = name[0] in PLAIN_START and all(c in PLAIN_REST for c in name)
    return name if plain and quote is None else quote_name(name, quote or "'")


names = st.text(NAME_ALPHABET, min_size=1, max_size=8).filter(lambda s: s.strip() == s)
quotes = st.sampled_from([None, "'", '"'])
numeric_types = st.sampled_from(["numeric", "NUMERIC", "real", "Real", "integer", "INTEGER"])
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def format_number(draw, value, integer_like):
    if integer_like:
        return str(int(value))
    return draw(st.sampled_from([repr, "{:.17g}".format, "{:.17e}".format]))(value)


@st.composite
def arff_files(draw, *, nominal_and_missing=False):
    """(bytes of a valid ARFF file, options for load_arff, expected X, Y, names)."""
    n_features = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 4))
    n_attr = n_features + n_labels
    all_names = draw(st.lists(names, min_size=n_attr, max_size=n_attr, unique=True))
    nominal = draw(st.lists(st.booleans(), min_size=n_features, max_size=n_features))
    if not nominal_and_missing:
        nominal = [False] * n_features
    nominal_values = [
        draw(st.lists(names.filter(lambda v: v != "?"), min_size=1, max_size=4, unique=True))
        if nom
        else None
        for nom in nominal
    ]
    labels_first = draw(st.booleans())
    label_decl = draw(
        st.lists(
            st.sampled_from(["{0,1}", "{1,0}", "{ 0 , 1 }", "numeric"]),
            min_size=n_labels,
            max_size=n_labels,
        )
    )
    feature_names, label_names = all_names[:n_features], all_names[n_features:]
    order = (
        (["y"] * n_labels + ["x"] * n_features)
        if labels_first
        else (["x"] * n_features + ["y"] * n_labels)
    )
    attrs = []
    fi = li = 0
    for kind in order:
        if kind == "x":
            attrs.append(("x", fi))
            fi += 1
        else:
            attrs.append(("y", li))
            li += 1

    how = draw(st.sampled_from(["meka", "labels", "location"]))
    relation = write_name(draw(names), draw(quotes))
    if how == "meka":
        c = n_labels if labels_first else -n_labels
        relation = quote_name(f"rel: -C {c}", "'")
        options = {}
    elif how == "labels":
        options = {"labels": draw(st.permutations(label_names))}
    else:
        options = {"label_location": ("first" if labels_first else "last", n_labels)}
    if any(nominal):
        options["nominal"] = "onehot"

    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = []
    if draw(st.booleans()):
        lines.append("% " + draw(st.text(string.printable.strip(), max_size=20)))
    lines.append(f"{draw(st.sampled_from(['@relation', '@RELATION']))} {relation}")
    for kind, k in attrs:
        keyword = draw(st.sampled_from(["@attribute", "@ATTRIBUTE", "@Attribute"]))
        if kind == "x":
            name = write_name(feature_names[k], draw(quotes))
            if nominal[k]:
                vals = ", ".join(write_name(v, draw(quotes)) for v in nominal_values[k])
                lines.append(f"{keyword} {name} {{{vals}}}")
            else:
                lines.append(f"{keyword} {name} {draw(numeric_types)}")
        else:
            decl = label_decl[k]
            lines.append(f"{keyword} {write_name(label_names[k], draw(quotes))} {decl}")
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "% comment", "   "])))
    lines.append(draw(st.sampled_from(["@data", "@DATA"])))

    n_rows = draw(st.integers(0, 12))
    n_out = sum(len(nominal_values[k]) if nominal[k] else 1 for k in range(n_features))
    X = np.zeros((n_rows, n_out))
    Y = np.zeros((n_rows, n_labels), dtype=np.uint8)
    missing_used = False
    for r in range(n_rows):
        tokens = []  # one per attribute, in file order
        values = []  # (is_default_for_sparse)
        for kind, k in attrs:
            if kind == "y":
                v = draw(st.integers(0, 1))
                Y[r, k] = v
                text = draw(
                    st.sampled_from([str(v), f"{v}.0" if label_decl[k] == "numeric" else str(v)])
                )
                default = "0" if label_decl[k] != "{1,0}" else "1"
                tokens.append(text)
                values.append(str(v) == default)
                continue
            col = sum(len(nominal_values[j]) if nominal[j] else 1 for j in range(k))
            if nominal_and_missing and draw(st.integers(0, 5)) == 0:
                missing_used = True
                tokens.append("?")
                values.append(False)
                continue  # X stays 0 (missing="zero")
            if nominal[k]:
                idx = draw(st.integers(0, len(nominal_values[k]) - 1))
                X[r, col + idx] = 1.0
                tokens.append(write_name(nominal_values[k][idx], draw(quotes)))
                values.append(idx == 0)
            else:
                integer_like = draw(st.booleans())
                v = float(draw(st.integers(-(10**6), 10**6))) if integer_like else draw(finite)
                X[r, col] = v
                text = format_number(draw, v, integer_like)
                if draw(st.integers(0, 7)) == 0:
                    text = quote_name(text, draw(st.sampled_from(["'", '"'])))
                tokens.append(text)
                values.append(v == 0.0)
        if draw(st.booleans()):  # sparse row: the entries that differ from the default
            items = [
                f"{j} {tok}"
                for j, (tok, dflt) in enumerate(zip(tokens, values, strict=True))
                if not dflt or draw(st.integers(0, 3)) == 0
            ]
            items = draw(st.permutations(items))
            row = "{" + ", ".join(items) + "}"
        else:
            sep = draw(st.sampled_from([",", ", ", " ,"]))
            row = sep.join(tokens)
        if draw(st.integers(0, 5)) == 0:
            row += "  % trailing comment"
        lines.append(row)
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(["", "% a comment", "  "])))
    if missing_used:
        options["missing"] = "zero"
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data  # UTF-8 byte order mark
    compress = draw(st.sampled_from([None, gzip.compress, bz2.compress, lzma.compress]))
    if compress is not None:
        data = compress(data)
    expected_features = []
    for k in range(n_features):
        if nominal[k]:
            expected_features += [f"{feature_names[k]}={v}" for v in nominal_values[k]]
        else:
            expected_features.append(feature_names[k])
    return data, options, X, Y, tuple(expected_features), tuple(label_names)


def write(folder, data, name="fuzz.arff"):
    path = folder / name
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------ valid files


@settings(
    max_examples=examples(200),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=arff_files(), chunk_size=st.integers(1, 5))
def test_valid_files_round_trip(folder, case, chunk_size):
    data, options, X, Y, feature_names, label_names = case
    path = write(folder, data)
    d = load_arff(path, **options)
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.Y, Y)
    assert d.X.dtype == np.float64 and d.Y.dtype == np.uint8
    assert d.feature_names == feature_names
    assert d.label_names == label_names
    parts = list(iter_arff(path, chunk_size, **options))
    assert all(0 < x.shape[0] <= chunk_size for x, _ in parts)
    if parts:
        np.testing.assert_array_equal(np.vstack([x for x, _ in parts]), X)
        np.testing.assert_array_equal(np.vstack([y for _, y in parts]), Y)
    else:
        assert X.shape[0] == 0


@settings(
    max_examples=examples(100),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=arff_files(nominal_and_missing=True))
def test_valid_files_with_nominal_features_and_missing_values(folder, case):
    data, options, X, Y, feature_names, label_names = case
    d = load_arff(write(folder, data), **options)
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.Y, Y)
    assert d.feature_names == feature_names and d.label_names == label_names


@settings(
    max_examples=examples(60),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(values=st.lists(finite, min_size=1, max_size=30), single=st.booleans())
def test_float_values_survive_exactly(folder, values, single):
    """Every finite double written with repr() reads back bit for bit; float32 rounds once."""
    rows = "\n".join(f"{v!r},{i % 2}" for i, v in enumerate(values))
    text = "@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n" + rows + "\n"
    path = write(folder, text.encode())
    dtype = np.float32 if single else np.float64
    with np.errstate(over="ignore"):
        expected = np.array(values, dtype=np.float64).astype(dtype)
    if not np.isfinite(expected).all():  # beyond float32: refused, never an infinity
        with pytest.raises(ArffError, match=r"is beyond the range of float32; read the file"):
            load_arff(path, labels=["y"], dtype=dtype)
        return
    d = load_arff(path, labels=["y"], dtype=dtype)
    assert d.X.dtype == dtype
    np.testing.assert_array_equal(d.X[:, 0], expected)


# ------------------------------------------------------------------------------ hostile input

OPTIONS = [
    {},
    {"label_location": ("last", 1), "nominal": "onehot", "missing": "zero"},
    {"label_location": ("first", 1), "nominal": "onehot", "missing": "mean"},
]


def read_everything(path, options):
    """load_arff and iter_arff; the outcome (arrays, or the error message) of each."""
    outcomes = []
    for read in (
        lambda: load_arff(path, **options),
        lambda: list(iter_arff(path, 2, **options)),
    ):
        try:
            result = read()
        except ArffError as exc:
            outcomes.append(("error", str(exc)))
            continue
        except ValueError as exc:
            # documented: the label_location option names more attributes than the file has
            assert "label_location" in options and str(exc).startswith("label_location"), exc
            outcomes.append(("error", str(exc)))
            continue
        if isinstance(result, list):
            X = np.vstack([x for x, _ in result]) if result else None
            Y = np.vstack([y for _, y in result]) if result else None
        else:
            assert ((result.Y == 0) | (result.Y == 1)).all()
            X = result.X if len(result.X) else None
            Y = result.Y if len(result.Y) else None
            if "missing" in options:
                assert not np.isnan(result.X).any()
        outcomes.append(("data", X, Y))
    return outcomes


def check_hostile(folder, data):
    path = write(folder, data, "hostile.arff")
    for options in OPTIONS:
        (a, *ra), (b, *rb) = read_everything(path, options)
        assert a == b, (options, ra, rb)  # both read the file, or both refuse it
        if a == "error":
            if "cannot decompress" not in ra[0] + rb[0]:
                assert ra == rb, options  # the same first faulty line
        else:
            for u, v in zip(ra, rb, strict=True):
                np.testing.assert_array_equal(u, v)


HOSTILE = dict(
    max_examples=examples(250),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@settings(**HOSTILE)
@given(data=st.binary(max_size=600))
def test_arbitrary_bytes_raise_only_arff_errors(folder, data):
    check_hostile(folder, data)


ARFF_WORDS = [
    "@relation r",
    "@relation 'r: -C 1'",
    "@relation 'r: -C -2'",
    "@attribute",
    "@ATTRIBUTE",
    "@data",
    "numeric",
    "real",
    "integer",
    "string",
    "date",
    "relational",
    "{0,1}",
    "{1,0}",
    "{a,b}",
    "{",
    "}",
    "'",
    '"',
    "\\",
    ",",
    "%",
    "?",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "0",
    "1",
    "-1",
    "1e308",
    "1e309",
    "nan",
    "inf",
    "-0",
    "0x1p3",
    "1_000",
    "\u00e9",
    "\ufeff",
    "\x00",
    "Infinity",
    "-nan",
    "1e-999",
    "+.5",
    "\u0663",
    "\uff11",
    "\u3000",
    "\x0c",
    "'1 '",
    "{0 1_0}",
    "{+1 1}",
    "''",
]


@settings(**HOSTILE)
@given(parts=st.lists(st.sampled_from(ARFF_WORDS) | st.text(max_size=4), max_size=40))
def test_arbitrary_arff_like_text_raises_only_arff_errors(folder, parts):
    check_hostile(folder, "".join(parts).encode("utf-8", "surrogatepass"))


@settings(**HOSTILE)
@given(
    case=arff_files(nominal_and_missing=True),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "replace"]),
            st.integers(0, 10**6),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_damaged_valid_files_raise_only_arff_errors(folder, case, edits):
    data = bytearray(case[0])
    for op, pos, chunk in edits:
        pos = pos % (len(data) + 1)
        if op == "insert":
            data[pos:pos] = chunk
        elif op == "delete":
            del data[pos : pos + len(chunk)]
        else:
            data[pos : pos + len(chunk)] = chunk
    check_hostile(folder, bytes(data))


@settings(
    max_examples=examples(80),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    case=arff_files(),
    text=st.text(max_size=200),
    encoding=st.sampled_from(["utf-8", "latin-1", "utf-16", "ascii", "cp1252"]),
)
def test_damaged_mulan_xml_and_encodings_raise_only_arff_errors(folder, case, text, encoding):
    data, *_ = case
    path = write(folder, data, "x.arff")
    xml = folder / "x.xml"
    xml.write_text(text, encoding="utf-8", errors="surrogatepass")
    for read in (
        lambda: load_arff(path, xml=xml, encoding=encoding),
        lambda: list(iter_arff(path, 3, xml=xml, encoding=encoding)),
    ):
        try:
            read()
        except ArffError:
            pass


# ------------------------------------------------------------------------------ numbers

# The ARFF number: ASCII digits with an optional sign, decimal point and exponent
ARFF_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# what float() reads beyond it: nan, inf(inity), '_', blanks, non-ASCII digits; and 'x', 'd'
NUMBER_ALPHABET = "0123456789+-.eE_ \tnaifINFtyxd\u0663\uff11\u09e7"


@settings(
    max_examples=examples(300),
    deadline=DEADLINE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    token=st.text(NUMBER_ALPHABET, min_size=1, max_size=10) | st.sampled_from(["1e999", "-1e999"]),
    form=st.sampled_from(["plain", "quoted", "sparse"]),
)
def test_numbers_are_read_by_the_arff_grammar_only(folder, token, form):
    """A value loads iff it is an ARFF number within the range of a double, and then as float()
    reads it; otherwise the error names the line and the attribute. Unquoted values are stripped
    of the blanks around them, quoted ones are taken as they are."""
    value = token if form == "quoted" else token.strip()
    valid = ARFF_NUMBER.fullmatch(value) is not None and math.isfinite(float(value))
    row = {"plain": f"1,{token},0", "quoted": f"1,'{token}',0", "sparse": f"{{0 1, 1 {token}}}"}
    text = "@relation 'r: -C -1'\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n"
    path = write(folder, f"{text}@data\n{row[form]}\n".encode())
    try:
        d = load_arff(path)
    except ArffError as exc:
        assert not valid, (token, form, str(exc))
        assert exc.line == 6, str(exc)
        assert ("attribute 'b'" in exc.reason) or form == "sparse", str(exc)
        return
    assert valid, (token, form)
    assert d.X[0, 1] == float(value)
