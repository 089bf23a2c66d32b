"""The ARFF reader against hostile files: bombs of blank and comment lines, overlong lines, numbers
that Python's float() reads but ARFF does not, NUL characters, paths that are not regular files,
and inputs made to exhaust memory or time.

Every malformed input must raise ArffError naming the file and, where one applies, the line; the
same error from load_arff and iter_arff. Large inputs are built in constant memory and time: a
gzip file may hold several members, which decompress to their concatenation.
"""

import bz2
import faulthandler
import gzip
import lzma
import os
import re
import socket
import sys
import threading
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

from mlsom.datasets import ArffError, _arff, iter_arff, load_arff
from tests.helpers.arff_files import OPTIONS, outcomes, raises_at, write

HEADER = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n@data\n"
DATA_LINE = 5  # the line of @data in HEADER
MEKA_HEADER = HEADER.replace("@relation r", "@relation 'r: -C -1'")
MIB = 1 << 20


@pytest.fixture(autouse=True)
def watchdog():
    """A test of this module that hangs (a FIFO opened, a quadratic loop) dumps every thread's
    stack and ends the process instead of blocking the suite."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def gzip_members(path, pieces, level=9):
    """A gzip file of one member per repetition of each ``(bytes, count)`` piece: it decompresses
    to the pieces concatenated, each repeated ``count`` times, and takes a moment to build."""
    with open(path, "wb") as fh:
        for data, count in pieces:
            member = gzip.compress(data, level, mtime=0)
            for _ in range(count):
                fh.write(member)
    return path


def repeated(unit: bytes, size: int = 16 * MIB) -> bytes:
    """``unit`` repeated to about ``size`` bytes (whole units)."""
    return unit * max(1, size // len(unit))


def cpu_seconds(fn) -> float:
    """CPU time of this process spent in ``fn()`` (robust to other load on the machine)."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def decompress(path) -> None:
    with gzip.open(path, "rb") as fh:
        while fh.read(MIB):
            pass


def error_of(read) -> ArffError:
    with pytest.raises(ArffError) as info:
        read()
    return info.value


def same_error_from_both(path, **options) -> str:
    """The message of the ArffError that load_arff and iter_arff (chunks of 3) both raise."""
    load_error = str(error_of(lambda: load_arff(path, **options)))
    iter_error = str(error_of(lambda: list(iter_arff(path, 3, **options))))
    assert load_error == iter_error
    return load_error


# ---------------------------------------------------------------------------------------------
# blank and comment lines cost about what decompressing them costs


@pytest.mark.slow
def test_the_1_6_gb_blank_line_gzip_reads_in_seconds(tmp_path):
    """The review's bomb: 1.57 MB of gzip holding 1.6 GB of newlines took 526 s to read (one
    Python iteration per line). Blocks of blank lines are now passed over in one or two string
    method calls."""
    path = gzip_members(tmp_path / "blank.arff.gz", [(b"\n" * (16 * MIB), 96)])
    n_lines = 96 * 16 * MIB  # 1.61e9
    assert path.stat().st_size < 1_700_000
    unzip = cpu_seconds(lambda: decompress(path))
    error = None

    def read():
        nonlocal error
        error = error_of(lambda: load_arff(path))

    load = cpu_seconds(read)
    assert error.line == n_lines and "no @data section" in error.reason
    print(f"decompress {unzip:.2f} s, load_arff {load:.2f} s (CPU)")
    assert load < 10.0
    assert load < 4 * unzip + 0.5


@pytest.mark.parametrize(
    "name, unit, factor",
    [
        ("newlines", b"\n", 4),
        ("CR only", b"\r", 8),
        ("CRLF", b"\r\n", 6),
        ("blanks", b"  \t \n", 6),
        ("unicode blanks", "\u3000\u2003\n".encode(), 16),
        ("percent signs", b"%\n", 24),
        ("short comments", b"%a\n", 40),
        ("comments after blanks", b"  % c\n", 32),
        ("long comments", b"% a comment of some length, as in real files\n", 16),
        ("blank runs and comments", b"\n" * 500 + b"%\n" + b" \n" * 100 + b"% x\n", 24),
    ],
)
@pytest.mark.parametrize("where", ["header", "data"])
def test_skipped_lines_cost_a_small_factor_of_decompressing_them(
    tmp_path, name, unit, factor, where
):
    """32 MiB of blank or comment lines, in the header or among the data. The factors bound the
    CPU time against gzip's (which decompresses such repetitive text at about 1 ns a byte): the
    blank lines pass at string-method speed, the comments at a regular expression's (10-25 ns a
    line). One Python iteration per line, as before, costs over 100 times more."""
    bomb = (repeated(unit), 2)
    if where == "header":
        pieces = [(b"@relation r\n", 1), bomb, (b"@attribute a numeric\n", 1)]
        match = "no @data section"
    else:
        pieces = [(MEKA_HEADER.encode() + b"1,2,0\n", 1), bomb, (b"3,4,1\n", 1)]
        match = None
    path = gzip_members(tmp_path / "bomb.arff.gz", pieces, level=6)
    result = []

    def read():
        try:
            result.append(load_arff(path))
        except ArffError as exc:
            result.append(exc)

    load = cpu_seconds(read)
    unzip = cpu_seconds(lambda: decompress(path))
    n_lines = 1 + 2 * (len(repeated(unit)) // len(unit)) * unit.count(b"\n")
    if unit == b"\r":
        n_lines = 1 + 2 * len(repeated(unit))
    if match is None:
        d = result[0]
        np.testing.assert_array_equal(d.X, [[1, 2], [3, 4]])
        np.testing.assert_array_equal(d.Y, [[0], [1]])
    else:
        assert isinstance(result[0], ArffError) and match in str(result[0])
        assert result[0].line == n_lines + 1
    assert load < factor * unzip + 0.3, (load, unzip)


def test_blank_and_comment_lines_between_data_keep_line_numbers_right(tmp_path):
    """Runs of skipped lines of every kind, in blocks of every size, then an error: its line."""
    rng = np.random.default_rng(5)
    kinds = ["", "   ", "\t", "% c", "  % c", "%", "\u3000", "\x0c"]
    lines = []
    for _ in range(3000):
        if rng.random() < 0.5:
            lines += [kinds[k] for k in rng.integers(0, len(kinds), rng.integers(1, 40))]
        lines.append(f"{rng.random():.3f},{rng.random():.3f},{rng.integers(0, 2)}")
    text = MEKA_HEADER + "\n".join(lines) + "\n"
    d = load_arff(write(tmp_path, text))
    assert d.X.shape == (3000, 2)
    bad_line = DATA_LINE + len(lines) + 1 + 7
    path = write(tmp_path, text + "\n" * 7 + "1,2,3\n")
    assert same_error_from_both(path).startswith(f"{path}, line {bad_line}: label 'y'")
    for chunk in (1, 2, 7, 1000):
        parts = list(iter_arff(write(tmp_path, text), chunk))
        np.testing.assert_array_equal(np.vstack([x for x, _ in parts]), d.X)


def test_crlf_cr_and_lf_files_read_the_same_with_the_same_line_numbers(tmp_path):
    rows = ["1,2,0", "", "% c", "3,4,1", "5,6,7"]
    for newline in ("\n", "\r\n", "\r"):
        path = tmp_path / "eol.arff"
        path.write_bytes(newline.join(MEKA_HEADER.splitlines() + rows).encode())
        with raises_at(DATA_LINE + 5, "label 'y' has the value 7"):
            load_arff(path)
        path.write_bytes(newline.join(MEKA_HEADER.splitlines() + rows[:4]).encode())
        np.testing.assert_array_equal(load_arff(path).X, [[1, 2], [3, 4]])


# ---------------------------------------------------------------------------------------------
# lines longer than max_line_length


def test_a_gzip_of_one_1_6_gb_line_is_refused_without_reading_it(tmp_path):
    """The review's bomb: a single line of 1.6 GB gave a bare MemoryError."""
    path = gzip_members(tmp_path / "line.arff.gz", [(b"@relation r\n", 1), (b"1" * 16 * MIB, 96)])
    tracemalloc.start()
    try:
        start = time.perf_counter()
        error = error_of(lambda: load_arff(path))
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(error) == f"{path}, line 2: line longer than max_line_length=10000000 characters"
    assert error.line == 2
    assert peak < 64 * MIB, peak  # the default limit is 10 M characters: one 10 MB line at most
    assert elapsed < 10


@pytest.mark.parametrize("limit", [40, 1000, 70_000])
@pytest.mark.parametrize("where", ["header", "data", "comment", "blank", "last line"])
def test_lines_at_the_limit_pass_and_one_character_more_is_refused(tmp_path, limit, where):
    """Exactly at the limit: read; one more character: the error names the line and the limit,
    wherever the line lies against the blocks the file is read in."""

    def build(length):
        if where == "header":  # the relation name
            head = "@relation 'r: -C -1 "
            line = head + "x" * (length - len(head) - 1) + "'"
            return MEKA_HEADER.replace("@relation 'r: -C -1'", line) + "1,2,0\n", 1
        if where == "comment":
            return MEKA_HEADER + "1,2,0\n%" + "c" * (length - 1) + "\n3,4,1\n", DATA_LINE + 2
        if where == "blank":
            return MEKA_HEADER + "1,2,0\n" + " " * length + "\n3,4,1\n", DATA_LINE + 2
        row = "1,2,0"
        line = "0" * (length - len(row)) + row
        if where == "last line":  # no newline at the end of the file
            return MEKA_HEADER + "3,4,1\n" * 50 + line, DATA_LINE + 51
        return MEKA_HEADER + "3,4,1\n" * 50 + line + "\n3,4,1\n", DATA_LINE + 51

    text, line = build(limit)
    path = write(tmp_path, text)
    load_arff(path, max_line_length=limit)
    assert sum(x.shape[0] for x, _ in iter_arff(path, 4, max_line_length=limit)) > 0
    text, line = build(limit + 1)
    path = write(tmp_path, text)
    message = same_error_from_both(path, max_line_length=limit)
    assert message == f"{path}, line {line}: line longer than max_line_length={limit} characters"


def test_the_limit_counts_characters_not_bytes(tmp_path):
    path = tmp_path / "wide.arff"
    name = "\u00e9" * 30  # 60 bytes in UTF-8, 120 in UTF-16
    text = MEKA_HEADER.replace("@attribute a numeric", f"@attribute '{name}' numeric")
    for encoding in ("utf-8", "utf-16"):
        path.write_text(text + "1,2,0\n", encoding=encoding)
        d = load_arff(path, encoding=encoding, max_line_length=51)  # the longest line
        assert d.feature_names[0] == name
        with raises_at(2, "max_line_length=40"):
            load_arff(path, encoding=encoding, max_line_length=40)


def test_faulty_lines_before_a_long_line_are_reported_first(tmp_path):
    text = MEKA_HEADER + "1,2,0\n1,x,0\n" + "9" * 100 + "\n"
    path = write(tmp_path, text)
    assert same_error_from_both(path, max_line_length=50).startswith(
        f"{path}, line {DATA_LINE + 2}: value 'x'"
    )


@pytest.mark.parametrize(
    "value, exc",
    [
        (0, ValueError),
        (-1, ValueError),
        (True, ValueError),
        (1.5, ValueError),
        ("10", ValueError),
        (None, ValueError),
    ],
)
def test_max_line_length_must_be_a_positive_integer(tmp_path, value, exc):
    path = write(tmp_path, MEKA_HEADER + "1,2,0\n")
    with pytest.raises(exc, match="max_line_length must be a positive integer"):
        load_arff(path, max_line_length=value)
    with pytest.raises(exc, match="max_line_length must be a positive integer"):
        iter_arff(path, max_line_length=value)
    assert load_arff(path, max_line_length=np.int64(100)).X.shape == (1, 2)


# ---------------------------------------------------------------------------------------------
# numbers: what ARFF writes, not whatever float() reads

BAD_NUMBERS = [
    ("1e999", "is out of range"),
    ("-1e999", "is out of range"),
    ("1" * 400, "is out of range"),
    ("1_000", "digit separators"),
    ("1_0.5", "digit separators"),
    ("nan", "NaN is not a valid ARFF number"),
    ("NaN", "NaN is not a valid ARFF number"),
    ("-nan", "NaN is not a valid ARFF number"),
    ("+NAN", "NaN is not a valid ARFF number"),
    ("inf", "infinity is not a valid ARFF number"),
    ("-Inf", "infinity is not a valid ARFF number"),
    ("Infinity", "infinity is not a valid ARFF number"),
    ("-iNfInItY", "infinity is not a valid ARFF number"),
    ("\u0663", "ASCII digits"),  # Arabic-Indic three
    ("\u0661\u0662", "ASCII digits"),
    ("\uff11", "ASCII digits"),  # full-width one
    ("1\u00b2", "is not a number"),  # superscript two: float() refuses it too
    ("\u09e7", "ASCII digits"),  # Bengali one
    ("0x10", "is not a number"),
    ("1e", "is not a number"),
    ("1.2.3", "is not a number"),
    ("--1", "is not a number"),
    ("1d5", "is not a number"),
]


@pytest.mark.parametrize("token, reason", BAD_NUMBERS)
@pytest.mark.parametrize("form", ["plain", "quoted", "sparse", "beside a nominal"])
def test_numbers_python_reads_but_arff_does_not_are_errors(tmp_path, token, reason, form):
    """Each form takes another parser: the bulk numpy.loadtxt path, the quoted-token path, the
    sparse path, and the per-column conversion of files with nominal features."""
    header, first, options = MEKA_HEADER, "1,2,0", {}
    if form == "plain":
        row = f"1,{token},0"
    elif form == "quoted":
        row = f"1,'{token}',0"
    elif form == "sparse":
        row = f"{{1 {token}}}"
    else:
        header = MEKA_HEADER.replace("@attribute a numeric", "@attribute a {u,v}")
        first, row, options = "v,2,1", f"u,{token},0", {"nominal": "onehot"}
    path = write(tmp_path, header + first + "\n" + row + "\n")
    message = same_error_from_both(path, **options)
    assert message.startswith(f"{path}, line {DATA_LINE + 2}: value ")
    assert "of numeric attribute 'b'" in message and reason in message, message


@pytest.mark.parametrize("token", ["nan", "NaN", "inf", "1e999", "1_0", "\u0661"])
def test_a_label_that_is_no_number_is_named_as_it_is(tmp_path, token):
    """A literal nan was reported as a missing value ('?')."""
    numeric = MEKA_HEADER.replace("@attribute y {0,1}", "@attribute y numeric")
    for header in (MEKA_HEADER, numeric):
        path = write(tmp_path, header + "1,2,0\n" + f"1,2,{token}\n")
        message = same_error_from_both(path)
        assert f"line {DATA_LINE + 2}: label 'y' has the value {token!r}" in message, message
        assert "missing" not in message


def test_nan_is_not_reported_as_a_missing_value(tmp_path):
    path = write(tmp_path, MEKA_HEADER + "nan,1,0\n")
    message = same_error_from_both(path)
    assert message == (
        f"{path}, line {DATA_LINE + 1}: value 'nan' of numeric attribute 'a': NaN is not a valid "
        "ARFF number (a missing value is written ?)"
    )
    # a real missing value still is one
    path = write(tmp_path, MEKA_HEADER + "?,1,0\n")
    assert "missing value ('?') of attribute 'a'" in same_error_from_both(path)
    assert np.isnan(load_arff(path, missing="mean").X).sum() == 0


@pytest.mark.parametrize(
    "token, value",
    [
        ("1.", 1.0),
        (".5", 0.5),
        ("+1", 1.0),
        ("-0", -0.0),
        ("1E5", 1e5),
        ("+.5e-3", 5e-4),
        ("0001", 1.0),
        ("1e0001", 10.0),
        ("1.7976931348623157e308", 1.7976931348623157e308),
        ("4.9e-324", 5e-324),
        ("1e-999", 0.0),  # below the smallest double: read as 0, as every ARFF reader does
    ],
)
@pytest.mark.parametrize("form", ["plain", "quoted", "sparse"])
def test_valid_numbers_still_read_exactly(tmp_path, token, value, form):
    row = {"plain": f"{token},1,0", "quoted": f"'{token}',1,0", "sparse": f"{{0 {token}, 1 1}}"}
    d = load_arff(write(tmp_path, MEKA_HEADER + row[form] + "\n"))
    assert d.X[0, 0] == value and np.signbit(d.X[0, 0]) == np.signbit(value)


def test_blanks_around_unquoted_values_are_not_part_of_them(tmp_path):
    d = load_arff(write(tmp_path, MEKA_HEADER + " 1 ,\t2\t, 0 \n'3' , \"4\",1\n"))
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4]])


def test_quoted_nominal_values_are_matched_exactly(tmp_path):
    header = MEKA_HEADER.replace("@attribute a numeric", "@attribute a {' red', red}")
    d = load_arff(write(tmp_path, header + "' red',1,0\nred,1,0\n'red',1,0\n"), nominal="onehot")
    np.testing.assert_array_equal(d.X[:, :2], [[1, 0], [0, 1], [0, 1]])
    path = write(tmp_path, header.replace("' red', ", "") + "' red',1,0\n")
    assert "value ' red' is not one of the declared values" in same_error_from_both(
        path, nominal="onehot"
    )


@pytest.mark.parametrize(
    "attributes, row, match",
    [
        (
            "@attribute 'c=x' numeric\n@attribute c {x,z}\n",
            "1,x,0",
            r"the feature name 'c=x' is given twice: to numeric attribute 'c=x' \(line 2\) and to "
            r"the one-hot column of value 'x' of nominal attribute 'c'; rename one",
        ),
        (
            "@attribute c {x,z}\n@attribute 'c=z' numeric\n",
            "x,1,0",
            r"the feature name 'c=z' is given twice: to the one-hot column of value 'z' of nominal "
            r"attribute 'c' \(line 2\) and to numeric attribute 'c=z'; rename one",
        ),
        (
            "@attribute a {'b=c'}\n@attribute 'a=b' {c}\n",
            "'b=c',c,0",
            r"the feature name 'a=b=c' is given twice: to the one-hot column of value 'b=c' of "
            r"nominal attribute 'a' \(line 2\) and to the one-hot column of value 'c' of nominal "
            r"attribute 'a=b'; rename one",
        ),
    ],
)
def test_one_hot_names_that_collide_are_an_error_naming_both_attributes(
    tmp_path, attributes, row, match
):
    path = write(
        tmp_path, f"@relation 'r: -C -1'\n{attributes}@attribute y {{0,1}}\n@data\n{row}\n"
    )
    message = same_error_from_both(path, nominal="onehot")
    assert re.fullmatch(rf".*t\.arff, line 3: {match}.*", message)


def test_one_hot_names_beside_other_names_with_an_equals_sign_load(tmp_path):
    header = "@relation 'r: -C -1'\n@attribute 'c=y' numeric\n@attribute c {x,z}\n"
    path = write(tmp_path, header + "@attribute y {0,1}\n@data\n1,x,0\n2,z,1\n")
    d = load_arff(path, nominal="onehot")
    assert d.feature_names == ("c=y", "c=x", "c=z")
    np.testing.assert_array_equal(d.X, [[1, 1, 0], [2, 0, 1]])


@pytest.mark.parametrize(
    "entry, match",
    [
        ("+1 5", r"sparse index '\+1' is not an integer"),
        ("1_0 5", "sparse index '1_0' is not an integer"),
        ("\u0661 5", "sparse index '\u0661' is not an integer"),
        ("\uff11 5", "sparse index '\uff11' is not an integer"),
        ("1.0 5", r"sparse index '1\.0' is not an integer"),
        ("-1 5", "sparse index -1 out of range"),
        ("3 5", "sparse index 3 out of range"),
        ("9" * 30 + " 5", r"sparse index 9{19}\.\.\. \(30 digits\) out of range"),
        ("9" * 5000 + " 5", r"sparse index 9{19}\.\.\. \(5000 digits\) out of range"),
    ],
)
def test_sparse_indices_are_ascii_digits_in_range(tmp_path, entry, match):
    path = write(tmp_path, MEKA_HEADER + "{0 1}\n{" + entry + "}\n")
    message = same_error_from_both(path)
    assert re.search(rf"line {DATA_LINE + 2}: {match}", message), message
    assert len(message) < 300
    assert load_arff(write(tmp_path, MEKA_HEADER + "{01 5, 002 1}\n")).X.tolist() == [[0, 5]]


@pytest.mark.parametrize("count", ["9" * 5000, "9" * 30])
def test_a_meka_label_count_of_thousands_of_digits_is_an_arff_error(tmp_path, count):
    """int() refuses more than 4300 digits with a ValueError, which was not an ArffError."""
    path = write(tmp_path, MEKA_HEADER.replace("-C -1", f"-C {count}") + "1,2,0\n")
    with raises_at(1, "digits\\) is not a valid number of labels"):
        load_arff(path)


def test_non_ascii_digits_are_no_meka_label_count(tmp_path):
    """-C \\u0661 was read as -C 1."""
    path = write(tmp_path, MEKA_HEADER.replace("-C -1", "-C \u0661") + "1,2,0\n")
    with pytest.raises(ArffError, match="cannot tell which attributes are labels"):
        load_arff(path)


def test_a_row_of_one_empty_quoted_value_is_not_skipped(tmp_path):
    path = write(tmp_path, MEKA_HEADER + "1,2,0\n''\n\"\" % c\n")
    with raises_at(DATA_LINE + 2, "expected 3 values, found 1"):
        load_arff(path)


# ---------------------------------------------------------------------------------------------
# NUL characters


@pytest.mark.parametrize(
    "text, line, column",
    [
        (MEKA_HEADER + "2\0,1,0\n", DATA_LINE + 1, 2),
        (MEKA_HEADER + "1,2,0\n'a\0b',1,0\n", DATA_LINE + 2, 3),
        (MEKA_HEADER + "1,2,0\n% comment \0\n", DATA_LINE + 2, 11),
        (MEKA_HEADER + "1,2,0\n{0 1\0}\n", DATA_LINE + 2, 5),
        ("\0" + MEKA_HEADER, 1, 1),
        (MEKA_HEADER.replace("@attribute b", "@attribute b\0"), 3, 13),
        (MEKA_HEADER + "1,2,0\n" * 30_000 + "\0", DATA_LINE + 30_001, 1),
    ],
)
def test_a_nul_character_anywhere_is_an_error_naming_line_and_column(tmp_path, text, line, column):
    """'2\\0' was read as 2: numpy's fixed-width strings drop trailing NULs."""
    path = write(tmp_path, text)
    assert same_error_from_both(path) == (
        f"{path}, line {line}: NUL character at character {column} (is this a text file?)"
    )


def test_lines_before_a_nul_come_first(tmp_path):
    path = write(tmp_path, MEKA_HEADER + "1,2,0\n1,2,5\n3\0,4,1\n")
    assert "line 7: label 'y' has the value 5" in same_error_from_both(path)


def test_utf16_files_hold_nul_bytes_but_no_nul_characters(tmp_path):
    path = tmp_path / "u16.arff"
    path.write_text(MEKA_HEADER + "1,2,0\n", encoding="utf-16")
    assert b"\0" in path.read_bytes()
    assert load_arff(path, encoding="utf-16").X.tolist() == [[1, 2]]


# ---------------------------------------------------------------------------------------------
# paths that are not regular files


def refused(path, kind):
    """The start of the message for a path that is not a regular file, as a pattern."""
    return re.escape(f"{path}: is {kind}, not a regular file")


def raised_in_a_thread(read, fifo):
    """What ``read()`` raises, run in a thread: if it blocks (on the FIFO), the FIFO is opened
    for writing, which releases it, and the test fails instead of hanging."""
    result = []

    def run():
        try:
            read()
        except Exception as exc:
            result.append(exc)
        else:
            result.append(None)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("reading a FIFO blocked")
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
@pytest.mark.parametrize("via", ["path", "symbolic link", "xml"])
def test_a_fifo_is_refused_before_it_is_opened(tmp_path, via):
    """Opening a FIFO for reading blocks until a writer comes: load_arff hung forever."""
    fifo = tmp_path / "pipe.arff"
    os.mkfifo(fifo)
    path, options, named = fifo, {}, fifo
    if via == "symbolic link":
        path = named = tmp_path / "link.arff"
        path.symlink_to(fifo)
    elif via == "xml":
        path = write(tmp_path, HEADER + "1,2,0\n", "x.arff")
        options = {"xml": fifo}
    for read in (lambda: load_arff(path, **options), lambda: iter_arff(path, **options)):
        error = raised_in_a_thread(read, fifo)
        assert isinstance(error, ArffError), error
        assert re.match(refused(named, "a FIFO (named pipe)"), str(error)), str(error)
        assert error.line is None


def test_a_directory_is_refused(tmp_path):
    for read in (lambda: load_arff(tmp_path), lambda: iter_arff(tmp_path)):
        with pytest.raises(ArffError, match=refused(tmp_path, "a directory")) as info:
            read()
        assert info.value.line is None and info.value.path == str(tmp_path)
    path = write(tmp_path, HEADER + "1,2,0\n")
    with pytest.raises(ArffError, match=refused(tmp_path, "a directory")):
        load_arff(path, xml=tmp_path)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_a_device_is_refused(tmp_path):
    for device in ("/dev/null", "/dev/zero", "/dev/urandom"):
        if os.path.exists(device):
            with pytest.raises(ArffError, match=refused(device, "a character device")):
                load_arff(device)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.arff"
    with socket.socket(socket.AF_UNIX) as server:
        try:
            server.bind(os.fspath(path))
        except OSError:  # path too long for a socket address
            pytest.skip("cannot bind a Unix socket here")
        with pytest.raises(ArffError, match=refused(path, "a socket")):
            load_arff(path)


def test_symbolic_links_to_regular_files_are_read(tmp_path):
    target = write(tmp_path, MEKA_HEADER + "1,2,0\n", "target.arff")
    link = tmp_path / "link.arff"
    link.symlink_to(target)
    assert load_arff(link).X.tolist() == [[1, 2]]
    with pytest.raises(FileNotFoundError):
        load_arff(tmp_path / "missing.arff")
    dangling = tmp_path / "dangling.arff"
    dangling.symlink_to(tmp_path / "nowhere.arff")
    with pytest.raises(FileNotFoundError):
        load_arff(dangling)


def test_a_path_that_turns_into_a_fifo_after_the_check_is_still_refused(tmp_path, monkeypatch):
    """The file is opened without blocking and checked again (a FIFO swapped in after os.stat)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    path = write(tmp_path, MEKA_HEADER + "1,2,0\n")
    real_open = os.open

    def swap_then_open(p, flags, *args):
        if os.fspath(p) == os.fspath(path):
            os.remove(path)
            os.mkfifo(path)
        return real_open(p, flags, *args)

    monkeypatch.setattr(_arff.os, "open", swap_then_open)
    with pytest.raises(ArffError, match=refused(path, "a FIFO (named pipe)")):
        load_arff(path)


# ---------------------------------------------------------------------------------------------
# structure made to exhaust memory or time


def test_many_attributes_and_sparse_rows_are_parsed_in_bounded_blocks(tmp_path, monkeypatch):
    """A wide header: rows are parsed in blocks of at most _BLOCK_CELLS values, so a block of
    20,000 sparse rows of 50,000 attributes (8 GB) is never allocated at once."""
    n = 50_000
    header = "@relation 'w: -C -1'\n" + "".join(f"@attribute a{j} numeric\n" for j in range(n))
    path = write(tmp_path, header + "@attribute y {0,1}\n@data\n" + "{3 1.5}\n{}\n" * 50)
    schema_rows = []
    real = _arff._Schema.read_block

    def spy(self, raw, linenos, missing):
        schema_rows.append(len(raw))
        return real(self, raw, linenos, missing)

    monkeypatch.setattr(_arff._Schema, "read_block", spy)
    d = load_arff(path)
    assert d.X.shape == (100, n) and d.X[::2, 3].tolist() == [1.5] * 50 and d.X.sum() == 75
    assert max(schema_rows) == _arff._BLOCK_CELLS // (n + 1)


def test_rows_beyond_the_available_memory_are_a_memory_error(tmp_path, monkeypatch):
    """A small file of sparse rows can stand for more rows than any memory holds: load_arff
    stops with a MemoryError naming the file, instead of being killed by the system."""
    header = "@relation 'w: -C -1'\n" + "".join(f"@attribute a{j} numeric\n" for j in range(1000))
    path = gzip_members(
        tmp_path / "rows.arff.gz",
        [((header + "@attribute y {0,1}\n@data\n").encode(), 1), (b"{}\n" * 100_000, 10)],
    )
    from mlsom import _memory

    monkeypatch.setattr(_memory, "memory_limit", lambda: (256 * MIB, "a small machine"))
    with pytest.raises(MemoryError, match=rf"^{re.escape(str(path))}: the first \d+ data lines"):
        load_arff(path)
    with pytest.raises(MemoryError, match=r"chunks of 10000 rows \(1000 features\) would need"):
        iter_arff(path, 10_000)
    chunks = iter_arff(path, 1000)
    x, y = next(chunks)
    assert x.shape == (1000, 1000) and not x.any()
    chunks.close()


def test_a_long_name_times_many_nominal_values_is_refused(tmp_path):
    """One-hot feature names are "attribute=value": a 10,000-character name and 10,000 values
    (one line of 60 kB) would make 100 million characters of names."""
    name = "n" * 10_000
    values = ",".join(str(k) for k in range(10_000))
    path = write(
        tmp_path,
        f"@relation 'r: -C -1'\n@attribute {name} {{{values}}}\n@attribute y {{0,1}}\n@data\n0,0\n",
    )
    with raises_at(2, "its one-hot columns would bring the feature names to over"):
        load_arff(path, nominal="onehot")
    with raises_at(2, "is nominal"):  # without one-hot expansion: the usual refusal
        load_arff(path)


def test_many_nominal_values_expand_in_bounded_blocks(tmp_path):
    values = ",".join(f"v{k}" for k in range(20_000))
    header = f"@relation 'r: -C -1'\n@attribute a {{{values}}}\n@attribute y {{0,1}}\n@data\n"
    path = write(tmp_path, header + "v7,1\nv19999,0\n{0 v3}\n{}\n" * 100)
    d = load_arff(path, nominal="onehot")
    assert d.X.shape == (400, 20_000) and d.X.sum() == 400
    assert d.X[:4].nonzero()[1].tolist() == [7, 19999, 3, 0]


@pytest.mark.parametrize(
    "line, match",
    [
        ("'" + "a" * 3_000_000, "unterminated ' quote"),
        ("1," * 1_000_000 + "'" + "x" * 1_000_000, "unterminated ' quote"),
        ("'" + "\\'" * 1_500_000, "unterminated ' quote"),
        ('"' + "\\" * 3_000_001, 'unterminated " quote'),
        ("'a'" * 1_000_000, "text after the closing quote"),
        ("{" + "0 1," * 500_000, "sparse row without closing"),
        ("{0 '" + "x," * 1_000_000 + "}", "unterminated ' quote"),
        ("," * 3_000_000, "expected 3 values, found 3000001"),
    ],
)
def test_megabyte_lines_of_quotes_and_separators_fail_in_linear_time(tmp_path, line, match):
    path = write(tmp_path, MEKA_HEADER + "1,2,0\n" + line + "\n")
    start = time.process_time()
    message = same_error_from_both(path)
    assert time.process_time() - start < 20
    assert f"line {DATA_LINE + 2}: {match}" in message and len(message) < 400, message[:400]


@pytest.mark.parametrize(
    "header_line, match",
    [
        ("@attribute '" + "a" * 3_000_000 + " numeric", "unterminated ' quote in name"),
        ("@attribute a " + "x" * 3_000_000, "has an unknown type 'xxx"),
        ("@" + "x" * 3_000_000, "unknown keyword '@xx"),
        ("@attribute a {" + "'b'," * 600_000 + "'b'}", "repeats a value"),
        ("@attribute a numeric " + " " * 3_000_000 + "% comment", None),
        ("@attribute " + "n" * 3_000_000 + " bogus", r"attribute 'n{40}'\.\.\.'n{20}' \(3000000 "),
    ],
)
def test_megabyte_header_lines_fail_in_linear_time(tmp_path, header_line, match):
    text = MEKA_HEADER.replace(
        "@attribute b numeric", header_line.replace("@attribute a", "@attribute b")
    )
    path = write(tmp_path, text + "1,2,0\n")
    start = time.process_time()
    if match is None:
        assert load_arff(path).X.tolist() == [[1, 2]]
    else:
        with raises_at(3, match) as info:
            load_arff(path)
        assert len(str(info.value)) < 400
    assert time.process_time() - start < 20


def test_an_encoding_whose_decoder_holds_everything_back_is_bounded(tmp_path):
    """The UTF-7 decoder gives no text for a base64 run until the run ends: it would hold the
    whole file (and decode it again at every read)."""
    path = tmp_path / "utf7.arff"
    path.write_bytes(b"+" + b"AAAA" * 500_000)
    with pytest.raises(ArffError, match="the decoder holds more than 1000 bytes without giving"):
        load_arff(path, encoding="utf-7", max_line_length=1000)
    path.write_bytes((MEKA_HEADER + "1,2,0\n").encode("utf-7"))
    assert load_arff(path, encoding="utf-7").X.tolist() == [[1, 2]]


def test_an_odd_number_of_bytes_in_utf16_is_an_arff_error_after_the_lines_before(tmp_path):
    path = tmp_path / "odd.arff"
    path.write_bytes((MEKA_HEADER + "1,2,0\n1,2,5\n").encode("utf-16") + b"\0")
    message = same_error_from_both(path, encoding="utf-16")
    assert "line 7: label 'y' has the value 5" in message
    path.write_bytes((MEKA_HEADER + "1,2,0\n").encode("utf-16") + b"\0")
    assert same_error_from_both(path, encoding="utf-16") == (
        f"{path}: cannot decode the text after line 6 as utf-16 (pass encoding=): 'utf-16-le' "
        "codec can't decode byte 0x00 in position 0: truncated data"
    )


def lzma_alone_with_dictionary(data: bytes, dict_size: int) -> bytes:
    """A legacy .lzma file whose header asks for a dictionary of ``dict_size`` bytes (the header
    has no checksum: bytes 1-4 hold the size)."""
    blob = bytearray(lzma.compress(data, format=lzma.FORMAT_ALONE))
    blob[1:5] = dict_size.to_bytes(4, "little")
    return bytes(blob)


def test_an_lzma_header_asking_for_gigabytes_of_memory_is_refused(tmp_path):
    data = (MEKA_HEADER + "1,2,0\n").encode()
    path = tmp_path / "big.arff.lzma"
    path.write_bytes(lzma_alone_with_dictionary(data, 0xFFFF_FFFF))
    message = same_error_from_both(path)
    assert message.startswith(
        f"{path}: cannot decompress the file (the xz/lzma data needs more "
        "than 256 MiB to decompress)"
    )
    path.write_bytes(lzma_alone_with_dictionary(data, 1 << 20))
    assert load_arff(path).X.tolist() == [[1, 2]]


def test_concatenated_and_padded_xz_streams_read_whole(tmp_path):
    first = lzma.compress((MEKA_HEADER + "1,2,0\n").encode())
    second = lzma.compress(b"3,4,1\n")
    path = tmp_path / "two.arff.xz"
    path.write_bytes(first + b"\0" * 8 + second + b"\0" * 4)
    assert load_arff(path).X.tolist() == [[1, 2], [3, 4]]
    path.write_bytes(first + b"garbage")
    assert "cannot decompress the file (xz/lzma data damaged" in same_error_from_both(path)


@pytest.mark.parametrize("compress, suffix", [(bz2.compress, "bz2"), (lzma.compress, "xz")])
def test_bz2_and_xz_bombs_of_blank_lines_stream_in_constant_memory(tmp_path, compress, suffix):
    data = b"@relation r\n" + b"\n" * (16 * MIB)
    path = tmp_path / f"bomb.arff.{suffix}"
    path.write_bytes(compress(data))
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    try:
        error = error_of(lambda: load_arff(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.line == 16 * MIB + 1 and "no @data section" in error.reason
    assert peak < 16 * MIB, peak


@pytest.mark.slow
def test_a_bzip2_bomb_is_refused_after_about_a_gigabyte(tmp_path):
    """bzip2 packs 64 MiB of newlines into 81 bytes: the 81 kB here hold 64 GiB (minutes to
    decompress; a megabyte would take hours). Data expanding over _MAX_EXPANSION-fold is refused."""
    stream = bz2.compress(b"\n" * (64 * MIB), 9)
    assert len(stream) < 100
    path = tmp_path / "bomb.arff.bz2"
    path.write_bytes(bz2.compress(b"@relation r\n") + stream * 1000)
    start = time.process_time()
    error = error_of(lambda: load_arff(path))
    assert time.process_time() - start < 30
    assert re.fullmatch(
        rf"{re.escape(str(path))}: cannot decompress the file \(bzip2 data after line \d+: a "
        r"decompression bomb\?\): it expands over 100000-fold, which no ARFF file does",
        str(error),
    ), str(error)


WIDE_HEADER = MEKA_HEADER.replace(
    "@attribute b numeric", "".join(f"@attribute b{k} numeric\n" for k in range(8))
)


@pytest.mark.parametrize(
    "compress, text, refused",
    [
        # rows repeated verbatim: near bzip2's most on data without runs, 16,000-fold
        (bz2.compress, WIDE_HEADER + "0,0,0,0,0,0,0,0,0,1\n" * 200_000, False),
        # near xz's most, on runs of one byte: 6,500-fold
        (lzma.compress, MEKA_HEADER + "\n" * (16 * MIB) + "1,2,0\n", False),
        # bzip2 on runs of one byte: 370,000-fold (800,000 on 64 MiB)
        (bz2.compress, MEKA_HEADER + "\n" * (16 * MIB) + "1,2,0\n", True),
    ],
)
def test_the_expansion_limit_lies_above_what_real_data_reaches(
    tmp_path, monkeypatch, compress, text, refused
):
    """With no floor under the count of compressed bytes, the ratio itself decides."""
    monkeypatch.setattr(_arff, "_EXPANSION_FLOOR", 1)
    path = tmp_path / "ratio.arff.bin"
    path.write_bytes(compress(text.encode()))
    if refused:
        assert "a decompression bomb?" in same_error_from_both(path)
    else:
        assert load_arff(path).X.shape[0] > 0


def test_a_zip_archive_is_not_decompressed_but_refused(tmp_path):
    """zip is no format the reader knows: its bytes are read as text, and refused at once (a zip
    bomb is never expanded)."""
    path = tmp_path / "data.arff.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data.arff", MEKA_HEADER + "\n" * 10_000_000)
    message = same_error_from_both(path)
    assert message.startswith(f"{path}, line 1: "), message
    assert "NUL character" in message or "cannot decode" in message, message


def test_trailing_garbage_after_gzip_data_is_an_arff_error(tmp_path):
    path = tmp_path / "t.arff.gz"
    path.write_bytes(gzip.compress((MEKA_HEADER + "1,2,0\n").encode()) + b"garbage!")
    assert "cannot decompress the file (gzip data damaged or truncated" in same_error_from_both(
        path
    )


def test_a_billion_laughs_xml_is_an_arff_error(tmp_path):
    entities = '<!ENTITY a0 "ha">' + "".join(
        f'<!ENTITY a{k} "{f"&a{k - 1};" * 10}">' for k in range(1, 12)
    )
    xml = tmp_path / "labels.xml"
    xml.write_text(
        f'<?xml version="1.0"?><!DOCTYPE l [{entities}]><labels><label name="&a11;"/></labels>'
    )
    path = write(tmp_path, HEADER + "1,2,0\n")
    start = time.process_time()
    with pytest.raises(ArffError, match="invalid XML"):
        load_arff(path, xml=xml)
    assert time.process_time() - start < 5


def test_every_hostile_input_gives_the_same_error_to_both_readers(tmp_path):
    """The inputs of this module's families, read with the options of the fuzzing harness."""
    inputs = [
        MEKA_HEADER + "1e999,1,0\n",
        MEKA_HEADER + "1,2,0\n" * 5 + "nan,1,0\n",
        MEKA_HEADER + "1,2,0\n\n\n% c\n2\0,1,0\n",
        MEKA_HEADER + "{0 1_0}\n",
        MEKA_HEADER + "1,2,0\n" + "\n" * 100_000 + "1,'\uff11',0\n",
        "@relation r\n"
        + "% c\n" * 50_000
        + "@attribute a numeric\n@attribute y {0,1}\n@data\n1,x\n",
    ]
    for k, text in enumerate(inputs):
        path = write(tmp_path, text, f"h{k}.arff")
        for options in OPTIONS:
            load_outcome, iter_outcome = outcomes(path, options)
            assert isinstance(load_outcome, str) and load_outcome == iter_outcome, k
            assert sys.getsizeof(load_outcome) < 2000


@pytest.mark.parametrize("reader", ["load", "iter"])
def test_a_value_beyond_float32_is_refused_when_reading_float32(tmp_path, reader):
    """1e39 fits a double but not a float32: an ArffError naming file and feature, not inf."""
    path = tmp_path / "big.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n1e39,1\n")
    with pytest.raises(ArffError, match=r"big\.arff: the value 1e\+39 of feature 'a' .*float32"):
        if reader == "load":
            load_arff(path, labels=["y"], dtype=np.float32)
        else:
            list(iter_arff(path, labels=["y"], dtype=np.float32, chunk_size=10))
    assert load_arff(path, labels=["y"]).X[1, 0] == 1e39  # float64 holds it


def test_arff_errors_pickle_with_their_parts():
    """A worker process's ArffError reaches the parent as it was (no '<arff>: ' prefix)."""
    import pickle

    e = pickle.loads(pickle.dumps(ArffError("bad value", "/d/y.arff", 3)))
    assert (str(e), e.path, e.line, e.reason) == (
        "/d/y.arff, line 3: bad value",
        "/d/y.arff",
        3,
        "bad value",
    )
