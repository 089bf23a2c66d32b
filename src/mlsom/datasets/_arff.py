"""Reader for multi-label data sets in Weka's ARFF format (Mulan and MEKA conventions).

Why a reader of our own: ``scipy.io.arff.loadarff`` reads only dense rows, knows nothing about
which attributes are labels, and is not a runtime dependency of mlsom (the core needs numpy only);
liac-arff (the ``arff`` package) decodes value by value in pure Python, holds the whole file as
Python lists, and knows nothing about labels either.

Label identification
--------------------
An ARFF file does not say which attributes are labels. Two conventions exist:

* **Mulan**: the labels are named in an XML file next to the ARFF
  (``<labels xmlns="http://mulan.sourceforge.net/labels"><label name="..."/>...``). Labels are
  matched *by name*; their column order is the order of the ARFF header, not that of the XML.
* **MEKA**: the relation name holds ``-C n``, e.g. ``@relation 'Yeast: -C 14 -split-number 1500'``.
  ``n > 0``: the first n attributes are the labels; ``n < 0``: the last ``|n|``.

Performance
-----------
The file is read in blocks of decoded text (:class:`_LineReader`): runs of blank and comment lines
are passed over with one regular-expression match or string method call per run, whatever their
number, and runs of data lines are split in one call. The ``@data`` section is parsed in blocks of
lines. In a file whose attributes are all numeric (or 0/1 labels), a block whose text holds
nothing but ASCII digits, signs, points, exponents, commas and blanks is parsed in one call to
``numpy.loadtxt``. Otherwise the block is scanned line by line: lines that need care (quotes with
escapes, sparse rows, ``?``, comments) are tokenised in Python, the plain dense lines among them
still go to ``numpy.loadtxt`` together, and the tokens of dense rows are converted per column.
When a block holds an error it is parsed again one line at a time, so that the reported line is
the first faulty one.

Hostile files
-------------
Memory is bounded by a block of text (about ``_READ_BYTES`` plus the longest line, at most
``max_line_length`` characters), a block of parsed rows (at most ``_BLOCK_CELLS`` values) and what
the caller asked for: all rows for load_arff, one chunk for iter_arff. Before a block is parsed,
the bytes of the rows so far and of the block (and of the one-hot columns' names, before they are
made) are checked against what the process can still get (``mlsom._memory.memory_budget``: the
physical memory, RLIMIT_AS and the control group's limit); a MemoryError names the file.
Numbers follow the ARFF syntax, not Python's: ``float()`` also accepts ``nan``, ``inf``,
``1_000``, surrounding blanks and non-ASCII digits, which are errors here, as are values beyond
the range of a double. A NUL character is an error wherever it is. Only regular files are opened:
a FIFO or a device could block the reader forever. Time is linear in the text: a line longer than
a block is read in blocks as long as its part already read, the regular expressions cannot
backtrack, and the XML file of the labels is parsed in reads that grow with an unfinished token,
a token (a tag, a comment, a declaration) over 1 MiB being refused.
"""

from __future__ import annotations

import bz2
import codecs
import functools
import gzip
import io
import lzma
import math
import numbers
import os
import re
import stat
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal
from xml.parsers import expat

import numpy as np

from .._memory import check_memory, memory_budget
from .._memory import format_bytes as _format_bytes

__all__ = ["ArffError", "ArffChunkIterator", "MultilabelDataset", "iter_arff", "load_arff"]

PathLike = str | os.PathLike

# Data lines parsed per block in load_arff (iter_arff: chunk_size lines per block).
_LOAD_BLOCK_LINES = 20_000
# Rows per block when summing columns for missing="mean".
_MEAN_BLOCK = 4096
# Default of max_line_length: the longest line (in characters) the readers accept. Dense rows of
# 100,000 numbers, or sparse rows of 500,000 entries, stay far below it.
_MAX_LINE_LENGTH = 10_000_000
# Bytes of (decompressed) file decoded per read.
_READ_BYTES = 1 << 20
# Bytes of a Mulan XML file parsed per read (more for a long token), and the longest token (a tag,
# a comment, a declaration) an XML file may hold.
_XML_READ_BYTES = 1 << 16
_XML_MAX_TOKEN = 1 << 20
# The most characters of data lines parsed together (a longer line is parsed alone).
_BLOCK_CHARS = 1 << 22
# The most values (rows x attributes, or x one-hot columns) parsed together.
_BLOCK_CELLS = 1 << 22
# The memory the xz/lzma decoder may use: xz -9 needs 65 MiB, a crafted header can ask for 4 GiB.
_LZMA_MEMLIMIT = 1 << 28
# Compressed data that expands more than this many times is refused (a decompression bomb). gzip
# cannot pass 1032, xz reaches 6,800 on runs of one byte, bzip2 20,000-30,000 on rows repeated
# verbatim, but a million on runs of one byte: 64 MiB of newlines in 81 bytes, a terabyte in a
# megabyte, hours to decompress. The ratio counts at least _EXPANSION_FLOOR compressed bytes (and
# the decompressors read 8 KiB ahead): a bomb is refused after about a gigabyte.
_MAX_EXPANSION = 100_000
_EXPANSION_FLOOR = 1 << 12
# The most characters of feature names a one-hot expansion may create ("attribute=value" for each
# value: a long name times many values would otherwise multiply).
_ONEHOT_NAME_CHARS = 1 << 26
_NUMERIC_TYPES = {"numeric", "real", "integer"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "%": "%"}
_MEKA_C = re.compile(r"(?:^|\s)-C\s+([+-]?[0-9]+)(?=\s|$)")
_SPLIT_SUFFIX = re.compile(r"^(.+?)[-_](?:train|test)$", re.IGNORECASE)


def _loadtxt_numeric(lines, n_attr):
    """Plain comma-separated numeric lines as an (n, n_attr) array, or None if any is not."""
    try:
        V = np.loadtxt(
            lines, delimiter=",", comments=None, quotechar=None, dtype=np.float64, ndmin=2
        )
    except ValueError:
        return None
    return V if V.shape == (len(lines), n_attr) else None


# The characters of an ARFF number: ASCII digits, sign, point, exponent. Python's float() also
# takes "nan", "inf", "1_000", surrounding blanks and non-ASCII digits; numpy.loadtxt some of them.
_NUMBER_CHARS = b"0123456789+-.eE"
# ... and of a plain dense line of numbers (the bulk parser's input): also commas and blanks.
_PLAIN_LINE_CHARS = _NUMBER_CHARS + b", \t\n"


def _only(text: str, chars: bytes) -> bool:
    """Whether ``text`` consists of the ASCII characters ``chars`` only (at C speed)."""
    return text.isascii() and not text.encode("ascii").translate(None, chars)


def _arff_float(tok: str) -> float | None:
    """The value of the ARFF number ``tok``; None for anything else, values beyond the range of a
    double included."""
    try:
        v = float(tok)
    except ValueError:
        return None
    # what float() accepts beyond ARFF: nan, inf, non-ASCII digits, '_', surrounding blanks
    if not math.isfinite(v) or not tok.isascii() or "_" in tok or tok != tok.strip():
        return None
    return v


def _why_not_a_number(tok: str) -> str:
    """The end of the message for a token that is no ARFF number: what is wrong with it."""
    try:
        v = float(tok)
    except ValueError:
        return " is not a number"
    if math.isnan(v):
        return ": NaN is not a valid ARFF number (a missing value is written ?)"
    if tok.strip().lstrip("+-").lower() in ("inf", "infinity"):
        return ": infinity is not a valid ARFF number"
    if math.isinf(v):
        return " is out of range: it exceeds the largest double (about 1.8e308)"
    if "_" in tok:
        return " is not a number: digit separators ('_') are not valid in ARFF numbers"
    if tok != tok.strip():
        return " is not a number: blanks inside quotes are not valid in ARFF numbers"
    return " is not a number: ARFF numbers are written with ASCII digits"


def _show(text: str, width: int = 80) -> str:
    """``repr(text)``, shortened in the middle when long (messages quote text from the file)."""
    if len(text) <= width:
        return repr(text)
    return f"{text[: width // 2]!r}...{text[-width // 4 :]!r} ({len(text)} characters)"


class ArffError(ValueError):
    """A malformed or unsupported ARFF (or Mulan XML) file.

    The message reads ``"<file>, line <n>: <reason>"``. The parts are also attributes.

    Attributes
    ----------
    path : str
        The file in which the problem was found (the ARFF, or the XML file of the labels).
    line : int or None
        1-based line number in the (decompressed) file, ``None`` when no line applies.
    reason : str
        The message without file and line.
    """

    def __init__(self, reason: str, path: PathLike | None = None, line: int | None = None):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.reason = reason
        where = self.path if self.path is not None else "<arff>"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):  # pickles (a worker process's error) keep path and line apart
        return (type(self), (self.reason, self.path, self.line))


@dataclass(frozen=True, eq=False, repr=False)
class MultilabelDataset:
    """A multi-label data set read from a file.

    Attributes
    ----------
    X : ndarray of shape (n_instances, n_features), float
        Features, in the attribute order of the file (nominal features expanded one-hot in place).
    Y : ndarray of shape (n_instances, n_labels), uint8
        0/1 label matrix; column order = order of the label attributes in the ARFF header.
    feature_names : tuple of str
        One name per column of ``X``, all distinct; a one-hot column of nominal attribute ``a``
        with value ``v`` is named ``"a=v"``.
    label_names : tuple of str
        One name per column of ``Y``.
    relation : str
        The ``@relation`` name (quotes removed).
    source : str
        The path the data was read from.
    """

    X: np.ndarray
    Y: np.ndarray
    feature_names: tuple[str, ...]
    label_names: tuple[str, ...]
    relation: str = ""
    source: str = ""

    @property
    def n_instances(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of labels."""
        return int(self.Y.shape[1])

    @property
    def cardinality(self) -> float:
        """Mean number of positive labels per instance (NaN for an empty data set)."""
        return float(self.Y.sum(axis=1).mean()) if self.Y.shape[0] else math.nan

    @property
    def density(self) -> float:
        """Cardinality divided by the number of labels."""
        return self.cardinality / self.n_labels if self.n_labels else math.nan

    def __repr__(self) -> str:
        return (
            f"MultilabelDataset(relation={self.relation!r}, n_instances={self.n_instances}, "
            f"n_features={self.n_features}, n_labels={self.n_labels}, source={self.source!r})"
        )


# --------------------------------------------------------------------------------------------
# opening files


def file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def not_regular(
    path, mode: int, why: str = "the ARFF readers read regular files only"
) -> ArffError:
    """The error for ``path``, of ``mode``, which is no regular file."""
    return ArffError(f"is {file_kind(mode)}, not a regular file: {why}", path, None)


def _read_error(exc: OSError, path, lineno: int | None = None) -> OSError:
    """``exc`` (an error reading ``path``), naming the file and the line being read."""
    if exc.filename is not None:
        return exc
    why = exc.strerror or str(exc) or type(exc).__name__
    if lineno is not None:
        why += f" while reading line {lineno}"
    return OSError(exc.errno, why, os.fspath(path))


def _open_regular(path) -> io.BufferedReader:
    """Open a regular file (or a symbolic link to one) for reading in binary.

    Anything else is refused before it is opened: opening a FIFO blocks until a writer comes, and
    reading a FIFO, a terminal or a device can block forever. The file is opened without blocking
    and checked again, in case the path changed in between. An error of the system (a symbolic
    link loop, a permission denied) names the file."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode)
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblocking | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        if nonblocking:
            os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_XZ_INPUT_BYTES = 1 << 16  # compressed bytes fed to the xz decoder at a time


class _XZReader:
    """Decompress xz (and legacy lzma) data with a bound on the decoder's memory, which
    ``lzma.LZMAFile`` does not take: the header of a stream chooses the size of the dictionary the
    decoder fills, up to 4 GiB. Concatenated streams are read one after the other; NUL bytes
    between and after them are stream padding."""

    def __init__(self, fh, memlimit: int):
        self._fh = fh
        self._memlimit = memlimit
        self._decoder = lzma.LZMADecompressor(lzma.FORMAT_AUTO, memlimit)
        self._done = False

    def read(self, size: int) -> bytes:
        while not self._done:
            if self._decoder.eof:
                data = self._decoder.unused_data.lstrip(b"\0")
                while not data:
                    more = self._fh.read(_XZ_INPUT_BYTES)
                    if not more:
                        self._done = True
                        return b""
                    data = more.lstrip(b"\0")
                self._decoder = lzma.LZMADecompressor(lzma.FORMAT_AUTO, self._memlimit)
            elif self._decoder.needs_input:
                data = self._fh.read(_XZ_INPUT_BYTES)
                if not data:
                    raise EOFError("the compressed file ends before the end-of-stream marker")
            else:
                data = b""
            out = self._decoder.decompress(data, size)
            if out:
                return out
        return b""

    def close(self) -> None:
        pass  # the file is closed by _open_lines


# A run of lines to pass over, from the start of a line: blank lines and comments (lines whose
# first character other than a blank is '%'). It ends at the first character other than a blank
# of the next line with content, or at the end of the text.
_SKIPPED = re.compile(r"(?:\s*+%[^\n]*+)*+\s*+")
_BLANKS_AND_PERCENTS = re.compile(r"[\s%]*+")
# The newline before a blank or comment line.
_SKIPPED_LINE = re.compile(r"\n[^\S\n]*+[\n%]")
# Undecodable bytes become lone surrogates (U+DC80-U+DCFF), which no valid text holds.
_UNDECODABLE = re.compile("[\udc80-\udcff]")
# What the decompressors raise for damaged or truncated data: gzip.BadGzipFile and bz2's
# "Invalid data stream" are OSErrors, a truncated stream raises EOFError, a damaged deflate stream
# zlib.error, a damaged xz stream lzma.LZMAError.
_DECOMPRESSION_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


class _LineReader:
    """The lines of an ARFF file, decoded and numbered from 1; blank and comment lines are passed
    over in bulk.

    The file is decoded in blocks of ``_READ_BYTES`` and the text is held from the first line not
    consumed on, so memory stays within a block and ``max_line_length``. ``\\r\\n`` and ``\\r`` end
    lines as ``\\n`` does. A problem found in the text (a NUL character, a byte undecodable in the
    encoding, a line longer than ``max_line_length``, a decoding or decompression failure, data
    that expands beyond ``_MAX_EXPANSION``) is raised once the lines before it are consumed, so
    that errors come in the order of the lines. ``raw`` is the (decompressed) binary stream,
    ``source`` the compressed file under it, whose position counts the bytes read.
    """

    def __init__(
        self,
        raw,
        path,
        encoding: str,
        compression: str | None,
        max_line_length: int,
        source=None,
    ):
        self.path = path
        self.encoding = encoding
        self.lineno = 0  # the lines consumed (taken or passed over)
        self.in_header = True  # the wording of a decoding failure
        self._raw = raw
        self._compression = compression
        self._source = source  # the compressed file (its position: the bytes read from it)
        self._expanded = 0  # the bytes decompressed
        self._limit = max_line_length
        # a read of at most max_line_length bytes holds no complete line longer than that (with
        # the encodings that make at most one character of a byte; _append checks the others)
        self._read_size = min(_READ_BYTES, max_line_length)
        decoder = codecs.getincrementaldecoder(encoding)(errors="surrogateescape")
        self._decoder = io.IncrementalNewlineDecoder(decoder, translate=True)
        self._buf = ""  # decoded text; the lines before self._pos are consumed
        self._pos = 0
        self._final = False  # no more text will come
        self._problem = None  # makes the error due at the end of the text, if there is one
        self._line_chars = 80  # the average length of the lines taken last

    # ---- reading ------------------------------------------------------------------------

    def _more(self) -> bool:
        """Append the next block of text; False when no more text will come. Called only when
        the text not consumed holds no newline."""
        if self._final:
            return False
        # A line longer than a block is read in blocks as long as its part already read (up to
        # max_line_length + 1 characters in all): it is then copied and searched a bounded number
        # of times in all, not once per block (a time quadratic in the line's length).
        held = len(self._buf) - self._pos
        size = max(self._read_size, min(held, self._limit + 1 - held))
        try:
            data = self._raw.read(size)
            text = self._decoder.decode(data, final=not data)
        except UnicodeError as exc:
            return self._stop(lambda why=str(exc): self._cannot_decode(why))
        except _DECOMPRESSION_ERRORS as exc:
            # an error of the system reading the file (EIO) has an errno; the decompressors'
            # errors about the data (BadGzipFile, bz2's "Invalid data stream") have none
            if self._compression is None or getattr(exc, "errno", None) is not None:
                raise _read_error(exc, self.path, self.lineno + 1) from None
            return self._stop(lambda why=str(exc): self._cannot_decompress(why))
        if not data:
            self._final = True
        elif self._compression is not None and self._bomb(len(data)):
            why = f"it expands over {_MAX_EXPANSION}-fold, which no ARFF file does"
            return self._stop(lambda: self._cannot_decompress(why, "a decompression bomb?"))
        elif len(self._decoder.getstate()[0]) > self._limit:
            # a decoder that holds its input back (UTF-7 a base64 run to its end) can hold it all
            why = f"the decoder holds more than {self._limit} bytes without giving text"
            return self._stop(lambda: self._cannot_decode(why))
        self._append(text)
        return True

    def _bomb(self, n_bytes: int) -> bool:
        """Count ``n_bytes`` more decompressed; whether the data now expands beyond reason."""
        self._expanded += n_bytes
        return self._expanded > _MAX_EXPANSION * max(self._source.tell(), _EXPANSION_FLOOR)

    def _stop(self, problem) -> bool:
        self._final = True
        self._problem = problem
        return False

    def _append(self, text: str) -> None:
        """Add ``text`` to the line left over; cut it at the first problem in it."""
        head = self._buf[self._pos :]  # part of a line: the text not consumed holds no newline
        cut, problem = len(text), None
        newline = text.find("\n")
        if len(head) + (newline if newline >= 0 else len(text)) > self._limit:
            cut, problem = 0, self._too_long
        elif len(text) > self._limit:  # an encoding that makes more characters than bytes
            start = newline + 1
            while True:
                end = text.find("\n", start)
                if (end if end >= 0 else len(text)) - start > self._limit:
                    cut, problem = start, self._too_long
                    break
                if end < 0:
                    break
                start = end + 1
        nul = text.find("\0", 0, cut)
        if nul >= 0:
            cut, problem = nul, self._nul
        if not text.isascii():
            m = _UNDECODABLE.search(text, 0, cut)
            if m is not None:
                cut, problem = m.start(), functools.partial(self._undecodable, m.group())
        if problem is not None:
            text = text[:cut]
            self._stop(problem)
        self._buf = head + text
        self._pos = 0

    def _consume(self, pos: int) -> None:
        """Mark the lines before ``pos`` (the start of a line) as consumed."""
        self.lineno += self._buf.count("\n", self._pos, pos)
        self._pos = pos

    def _end_last_line(self) -> bool:
        """At the end of the text: give the last line, if it has no newline, one. False when
        there is no such line (or when a problem cut the text: its line is not complete)."""
        if self._problem is not None or self._pos == len(self._buf):
            return False
        self._buf += "\n"
        return True

    # ---- what the readers call ----------------------------------------------------------

    def _skip(self) -> bool:
        """Pass over blank and comment lines. True when a complete line with content starts at the
        reading position, False at the end of the text."""
        while True:
            buf, pos = self._buf, self._pos
            first = buf[pos : pos + 1]
            if first and first != "%" and not first.isspace() and buf.find("\n", pos) >= 0:
                return True  # the common case: a complete line with content right here
            if pos == 0 and buf[:1] == buf[-1:] == "\n" and buf.count("\n") == len(buf):
                # a block read of empty lines only (a blank-line bomb): one pass over it
                self.lineno += len(buf)
                self._pos = len(buf)
            else:
                if pos == 0 and buf.isspace():  # a block read of blank lines only
                    end = len(buf)
                else:
                    # Lines of blanks and '%' only are blank lines or comments: a character class
                    # passes over any number of them at once. Then line by line (in the regular
                    # expression), the comments with other text.
                    end = _BLANKS_AND_PERCENTS.match(buf, pos).end()
                    if end < len(buf):
                        end = _SKIPPED.match(buf, max(pos, buf.rfind("\n", pos, end) + 1)).end()
                self._consume(max(pos, buf.rfind("\n", pos, end) + 1))
                if end < len(buf) and buf.find("\n", end) >= 0:
                    return True
            if not self._more() and not self._end_last_line():
                return False

    def next_line(self) -> str | None:
        """The next line with content, without its newline (its number is then ``lineno``); None
        at the end of the text, where an error due is raised instead."""
        if not self._skip():
            self._raise_problem()
            return None
        end = self._buf.find("\n", self._pos)
        line = self._buf[self._pos : end]
        self._pos = end + 1
        self.lineno += 1
        return line

    def take(self, max_lines: int, max_chars: int) -> tuple[list[str], list[int]]:
        """The next lines with content (without their newline) and their line numbers: at most
        ``max_lines`` lines and, unless the first line is longer, ``max_chars`` characters. No
        lines only at the end of the text; an error due there is raised instead."""
        lines: list[str] = []
        numbers: list[int] = []
        chars = 0
        while len(lines) < max_lines and chars < max_chars:
            if not self._skip():
                if not lines:
                    self._raise_problem()
                break
            buf, pos = self._buf, self._pos
            # a run of complete lines up to the next blank or comment line: no more characters
            # than left, nor than the lines wanted are estimated to take
            room = max_lines - len(lines)
            span = min(max_chars - chars, (room + room // 4 + 1) * self._line_chars)
            end = buf.rfind("\n", pos, pos + span) + 1
            if end <= pos:
                end = buf.find("\n", pos) + 1
            m = _SKIPPED_LINE.search(buf, pos, end)
            stop = m.start() + 1 if m is not None else end
            run = buf[pos : stop - 1].split("\n")
            if len(run) > room:
                run = run[:room]
                stop = pos + sum(map(len, run)) + room
            self._line_chars = max(1, (stop - pos) // len(run))
            numbers.extend(range(self.lineno + 1, self.lineno + 1 + len(run)))
            lines.extend(run)
            self.lineno += len(run)
            self._pos = stop
            chars += stop - pos
        return lines, numbers

    def skip_lines(self, n: int) -> None:
        """Pass over the first ``n`` lines, whatever they hold (the header, read before)."""
        while n > 0:
            buf, pos = self._buf, self._pos
            found = buf.count("\n", pos)
            if found >= n:
                # bisect for the n-th newline: it lies in buf[lo:hi], and `below` before lo
                lo, hi, below = pos, len(buf), 0
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    count = buf.count("\n", lo, mid)
                    if below + count >= n:
                        hi = mid
                    else:
                        lo, below = mid, below + count
                self._consume(hi)
                return
            self._consume(max(pos, buf.rfind("\n", pos) + 1))
            n -= found
            if not self._more() and not self._end_last_line():
                self._raise_problem()
                return

    # ---- the problems -------------------------------------------------------------------

    def _raise_problem(self) -> None:
        if self._problem is not None:
            raise self._problem()

    def _column(self) -> int:
        """The character of the line being read at which the text was cut."""
        return len(self._buf) - self._pos + 1

    def _too_long(self) -> ArffError:
        return ArffError(
            f"line longer than max_line_length={self._limit} characters", self.path, self.lineno + 1
        )

    def _nul(self) -> ArffError:
        return ArffError(
            f"NUL character at character {self._column()} (is this a text file?)",
            self.path,
            self.lineno + 1,
        )

    def _undecodable(self, char: str) -> ArffError:
        return ArffError(
            f"cannot decode the line as {self.encoding}: byte 0x{ord(char) - 0xDC00:02x} at "
            f"character {self._column()} (pass encoding=)",
            self.path,
            self.lineno + 1,
        )

    def _cannot_decode(self, why: str) -> ArffError:
        after = f" after line {self.lineno}" if self.lineno else ""
        if self.in_header:
            return ArffError(
                f"cannot decode the header as {self.encoding}{after}: {why}", self.path
            )
        return ArffError(
            f"cannot decode the text{after} as {self.encoding} (pass encoding=): {why}", self.path
        )

    def _cannot_decompress(self, why: str, reason: str | None = None) -> ArffError:
        after = f" after line {self.lineno}" if self.lineno else ""
        if "Memory usage limit" in why:  # lzma's message for the memlimit of _XZReader
            reason = f"the xz/lzma data needs more than {_LZMA_MEMLIMIT >> 20} MiB to decompress"
        elif reason is None:
            reason = f"{self._compression} data damaged or truncated{after}"
        else:
            reason = f"{self._compression} data{after}: {reason}"
        return ArffError(f"cannot decompress the file ({reason}): {why}", self.path)


@contextmanager
def _open_lines(path, encoding: str, max_line_length: int) -> Iterator[_LineReader]:
    """The lines of the ARFF file ``path``. gzip, bzip2 and xz are recognised by their magic bytes
    (whatever the suffix), legacy ``.lzma`` files by their suffix."""
    with _open_regular(path) as fh:
        try:
            magic = fh.read(6)
            fh.seek(0)
        except OSError as exc:  # EIO (/proc/self/mem), ...
            raise _read_error(exc, path, 1) from None
        if magic[:2] == b"\x1f\x8b":
            raw, compression = gzip.GzipFile(fileobj=fh, mode="rb"), "gzip"
        elif magic[:3] == b"BZh":
            raw, compression = bz2.BZ2File(fh, "rb"), "bzip2"
        elif magic == b"\xfd7zXZ\x00" or os.fspath(path).lower().endswith(".lzma"):
            raw, compression = _XZReader(fh, _LZMA_MEMLIMIT), "xz/lzma"
        else:
            raw, compression = fh, None
        try:
            yield _LineReader(raw, path, encoding, compression, max_line_length, fh)
        finally:
            raw.close()


# --------------------------------------------------------------------------------------------
# tokenising


# The expressions are written as "unrolled loops" with possessive quantifiers: a run of ordinary
# characters, then (a special one and a run)*. They cannot backtrack, so that a line of megabytes
# that does not match fails in linear time, and they do not iterate once per character.
_QUOTED = r"'[^'\\]*+(?:\\.[^'\\]*+)*+'" + "|" + r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_FIELD_PART = rf"""[^,'"%]*+(?:(?:{_QUOTED})[^,'"%]*+)*+"""
# a whole line: fields (quoted strings and other characters) separated by commas, then an
# optional comment; and one field of a line without comment
_LINE_RE = re.compile(rf"((?:{_FIELD_PART},)*+{_FIELD_PART})(?:%.*)?", re.S)
_FIELD_RE = re.compile(rf"(?:^|,)({_FIELD_PART})", re.S)
_ESCAPE_RE = re.compile(r"\\(.)", re.S)


# the text before the first '%' outside quotes (up to an unterminated quote, if there is one)
_BEFORE_COMMENT = re.compile(rf"""[^'"%]*+(?:(?:{_QUOTED})[^'"%]*+)*+""", re.S)
_QUOTED_RE = re.compile(_QUOTED, re.S)
# the text between a quote and its closing quote (another is escaped), per quote character
_ESCAPED_BODY = {q: re.compile(rf"[^{q}\\]*+(?:\\.[^{q}\\]*+)*+", re.S) for q in "'\""}
# an unquoted name: up to a blank or a '{'
_NAME_RE = re.compile(r"[^\s{]+")


def _split_fields(s: str, path, lineno: int) -> list[str]:
    """Split a line at commas outside quotes; stop at ``%`` outside quotes. Fields are stripped
    but keep their quotes (see :func:`_unquote`)."""
    m = _LINE_RE.fullmatch(s)
    if m is None:  # only an unterminated quote makes the expression fail: the first one
        end = _BEFORE_COMMENT.match(s).end()
        raise ArffError(f"unterminated {s[end]} quote", path, lineno)
    return [f.strip() for f in _FIELD_RE.findall(m.group(1))]


def _unquote(tok: str, path, lineno: int) -> str:
    """Remove the quotes of a quoted token and resolve its backslash escapes."""
    if not tok or tok[0] not in "'\"":
        return tok
    q = tok[0]
    if len(tok) >= 2 and tok[-1] == q:
        body = tok[1:-1]
        if "\\" not in body:
            if q not in body:
                return body
        elif _ESCAPED_BODY[q].fullmatch(body):
            return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)
    # malformed: a quoted string followed by more text, or no closing quote
    if _QUOTED_RE.match(tok) is not None:
        raise ArffError(f"text after the closing quote in {_show(tok)}", path, lineno)
    raise ArffError(f"unterminated {q} quote in {_show(tok)}", path, lineno)


def _strip_comment(s: str) -> str:
    """Text before the first ``%`` outside quotes."""
    if "%" not in s:
        return s
    end = _BEFORE_COMMENT.match(s).end()
    return s[:end] if end < len(s) and s[end] == "%" else s


def _take_name(s: str, path, lineno: int) -> tuple[str, str]:
    """Split ``s`` into a leading (possibly quoted) name and the rest."""
    s = s.lstrip()
    if not s:
        raise ArffError("missing name", path, lineno)
    if s[0] in "'\"":
        m = _QUOTED_RE.match(s)
        if m is None:
            raise ArffError(f"unterminated {s[0]} quote in name", path, lineno)
        return _unquote(m.group(0), path, lineno), s[m.end() :]
    m = _NAME_RE.match(s)
    if m is None:
        raise ArffError("missing name", path, lineno)
    return m.group(0), s[m.end() :]


# --------------------------------------------------------------------------------------------
# header


@dataclass
class _Attr:
    name: str
    kind: str  # numeric | nominal | string | date | relational
    line: int
    values: tuple[str, ...] = ()


@dataclass
class _Header:
    path: str
    relation: str
    attrs: list[_Attr]
    data_line: int  # line number of the @data line
    first_line: int = 1


def _parse_attribute(rest: str, path, lineno: int) -> _Attr:
    name, spec = _take_name(rest, path, lineno)
    spec = spec.strip()
    if not spec:
        raise ArffError(f"attribute {_show(name)} has no type", path, lineno)
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise ArffError(f"nominal attribute {_show(name)}: missing closing '}}'", path, lineno)
        inner = spec[1:-1]
        values = tuple(_unquote(v, path, lineno) for v in _split_fields(inner, path, lineno))
        if not inner.strip() or any(v == "" for v in values):
            raise ArffError(
                f"nominal attribute {_show(name)} has an empty value list or value", path, lineno
            )
        if len(set(values)) != len(values):
            raise ArffError(f"nominal attribute {_show(name)} repeats a value", path, lineno)
        if "?" in values:  # a '?' in the data is always read as a missing value, quoted or not
            raise ArffError(
                f"nominal attribute {_show(name)} declares the value '?', which ARFF reserves for "
                "missing values",
                path,
                lineno,
            )
        return _Attr(name, "nominal", lineno, values)
    word = spec.split()[0].lower()
    if word in _NUMERIC_TYPES:
        if len(spec.split()) > 1:
            raise ArffError(
                f"attribute {_show(name)}: unexpected text after {word!r}", path, lineno
            )
        return _Attr(name, "numeric", lineno)
    if word in ("string", "date", "relational"):
        return _Attr(name, word, lineno)
    raise ArffError(f"attribute {_show(name)} has an unknown type {_show(spec)}", path, lineno)


def _read_header(text: _LineReader, path) -> _Header:
    relation = None
    attrs: list[_Attr] = []
    while True:
        raw = text.next_line()
        if raw is None:
            break
        lineno = text.lineno
        s = raw.strip()
        if lineno == 1:
            s = s.lstrip("\ufeff")
        if not s or s.startswith("%"):
            continue
        s = _strip_comment(s).strip()
        if not s:
            continue
        low = s[:11].lower()
        if low.startswith("@relation") and (len(s) == 9 or s[9].isspace()):
            if relation is not None:
                raise ArffError("second @relation line", path, lineno)
            if attrs:
                raise ArffError("@relation after @attribute", path, lineno)
            rel = s[9:].strip()
            if rel[:1] in ("'", '"'):
                name, tail = _take_name(rel, path, lineno)
                rel = name if not tail.strip() else rel
            relation = rel
        elif low.startswith("@attribute") and (len(s) == 10 or s[10].isspace()):
            attrs.append(_parse_attribute(s[10:], path, lineno))
        elif low.startswith("@data") and (len(s) == 5 or s[5].isspace()):
            if s[5:].strip():
                raise ArffError("unexpected text after @data", path, lineno)
            if not attrs:
                raise ArffError("@data before any @attribute", path, lineno)
            if relation is None:
                raise ArffError("no @relation line before @data", path, lineno)
            seen: dict[str, int] = {}
            for a in attrs:
                if a.name in seen:
                    raise ArffError(
                        f"attribute name {_show(a.name)} is declared twice (lines {seen[a.name]} "
                        f"and {a.line})",
                        path,
                        a.line,
                    )
                seen[a.name] = a.line
            return _Header(os.fspath(path), relation, attrs, lineno)
        elif s.startswith("@"):
            raise ArffError(f"unknown keyword {_show(s.split()[0])}", path, lineno)
        else:
            raise ArffError(
                f"unexpected text in the header: {s[:40]!r} (expected @relation, @attribute "
                "or @data)",
                path,
                lineno,
            )
    raise ArffError("no @data section (end of file reached in the header)", path, text.lineno or 1)


# --------------------------------------------------------------------------------------------
# labels


def _read_xml_labels(xml_path) -> list[tuple[str, int]]:
    """Label names of a Mulan XML file, in document order, with their line numbers."""
    found: list[tuple[str, int]] = []
    parser = expat.ParserCreate()

    def start(tag, attrib):
        if tag.rsplit(":", 1)[-1] == "label":
            if "name" not in attrib:
                raise ArffError(
                    "<label> element without a name attribute", xml_path, parser.CurrentLineNumber
                )
            found.append((attrib["name"], parser.CurrentLineNumber))

    parser.StartElementHandler = start
    try:
        with _open_regular(xml_path) as fh:
            # each <label name=""/> takes at least 16 bytes of the file and about 300 of memory
            total = os.fstat(fh.fileno()).st_size
            check_memory(xml_path, (total // 16 + 1) * 300, "the labels the XML file can name")
            size = _XML_READ_BYTES
            while True:
                try:
                    data = fh.read(size)
                except OSError as exc:  # EIO, ...
                    raise _read_error(exc, xml_path, parser.CurrentLineNumber) from None
                parser.Parse(data, not data)
                if not data:
                    break
                # expat parses a token whose end it has not seen (a tag, a comment, a declaration)
                # again from its start at each call: the next read is as long as the part read,
                # so that a token is parsed a bounded number of times (in a time linear in its
                # length, not quadratic), and a token longer than _XML_MAX_TOKEN is refused (a
                # call hands expat at most 1 MiB, so that a longer one would be parsed again
                # for each MiB)
                pending = fh.tell() - parser.CurrentByteIndex
                if pending > _XML_MAX_TOKEN:
                    raise ArffError(
                        f"invalid XML: a tag, comment or declaration longer than "
                        f"{_XML_MAX_TOKEN} bytes, which no labels file holds",
                        xml_path,
                        parser.CurrentLineNumber,
                    )
                size = max(_XML_READ_BYTES, pending)
    except expat.ExpatError as exc:
        raise ArffError(
            f"invalid XML: {expat.errors.messages.get(exc.code, exc)}", xml_path, exc.lineno
        ) from None
    except (ValueError, LookupError) as exc:
        # the encoding the XML declaration names: "multi-byte encodings are not supported"
        # (UTF-7, ...), or an unknown one (LookupError)
        if isinstance(exc, ArffError):
            raise
        raise ArffError(f"unsupported XML: {exc}", xml_path, None) from None
    if not found:
        raise ArffError("no <label> element", xml_path, None)
    seen: dict[str, int] = {}
    for name, line in found:
        if name in seen:
            raise ArffError(
                f"label {_show(name)} is listed twice (lines {seen[name]} and {line})",
                xml_path,
                line,
            )
        seen[name] = line
    return found


def _companion_xml(path) -> str | None:
    """``<stem>.xml`` next to the ARFF (also for ``x-train.arff.gz`` -> ``x.xml``)."""
    d, base = os.path.split(os.fspath(path))
    stem = base
    for suf in (".gz", ".bz2", ".xz", ".lzma"):
        if stem.lower().endswith(suf):
            stem = stem[: -len(suf)]
            break
    if stem.lower().endswith(".arff"):
        stem = stem[:-5]
    candidates = [stem]
    m = _SPLIT_SUFFIX.match(stem)
    if m:
        candidates.append(m.group(1))
    for c in candidates:
        p = os.path.join(d, c + ".xml")
        try:
            mode = os.stat(p).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # (a symbolic link loop, a permission denied: raised, naming the file)
        if not stat.S_ISREG(mode):
            raise not_regular(
                p, mode, "the Mulan XML files of labels are read from regular files only"
            )
        return p
    return None


def _label_indices(h: _Header, labels, label_location, xml) -> list[int]:
    path = h.path
    n_attr = len(h.attrs)
    given = [a is not None for a in (labels, label_location, xml)]
    if sum(given) > 1:
        raise ValueError("give at most one of labels=, label_location= and xml=")
    by_name = {a.name: i for i, a in enumerate(h.attrs)}
    span = f"the header, lines {h.first_line}-{h.data_line}"
    if labels is not None:
        if isinstance(labels, str):
            raise TypeError("labels must be a sequence of attribute names, not a string")
        try:
            labels = list(labels)
        except TypeError:
            raise TypeError(
                f"labels must be a sequence of attribute names, got {labels!r}"
            ) from None
        if not labels:
            raise ValueError("labels= is empty")
        if len(set(labels)) != len(labels):
            raise ValueError(f"labels= repeats a name: {labels!r}")
        missing = [n for n in labels if n not in by_name]
        if missing:
            raise ArffError(f"no attribute named {missing[0]!r} in {span}", path, h.data_line)
        idx = sorted(by_name[n] for n in labels)
    elif label_location is not None:
        try:
            where, n = label_location
        except (TypeError, ValueError):
            raise ValueError(
                f"label_location must be ('first' | 'last', n), got {label_location!r}"
            ) from None
        if where not in ("first", "last") or isinstance(n, bool) or not isinstance(n, int):
            raise ValueError(
                f"label_location must be ('first' | 'last', n), got {label_location!r}"
            )
        if not 1 <= n < n_attr:
            raise ValueError(
                f"label_location: n must be in 1..{n_attr - 1} for {n_attr} attributes, got {n}"
            )
        idx = list(range(n)) if where == "first" else list(range(n_attr - n, n_attr))
    else:
        xml_path = xml
        meka = _MEKA_C.search(h.relation) if xml is None else None
        if meka is not None:
            count = meka.group(1)
            # (int() refuses more than 4300 digits: a count that long is out of range anyway)
            n = int(count) if len(count) <= 19 else n_attr
            if n == 0 or abs(n) >= n_attr:
                if len(count) > 19:
                    count = f"{count[:19]}... ({len(count)} digits)"
                raise ArffError(
                    f"relation {_show(h.relation)}: -C {count} is not a valid number of labels "
                    f"for {n_attr} attributes",
                    path,
                    h.first_line,
                )
            idx = list(range(n)) if n > 0 else list(range(n_attr + n, n_attr))
        else:
            if xml_path is None:
                xml_path = _companion_xml(path)
            if xml_path is None:
                raise ArffError(
                    "cannot tell which attributes are labels: the relation name has no MEKA "
                    "'-C n' and no Mulan XML file <name>.xml lies next to the file; pass xml=, "
                    "labels= or label_location=",
                    path,
                    None,
                )
            names = _read_xml_labels(xml_path)
            idx = []
            for name, line in names:
                if name not in by_name:
                    raise ArffError(
                        f"label {_show(name)} is not an attribute of {path} ({span})",
                        xml_path,
                        line,
                    )
                idx.append(by_name[name])
            idx.sort()
            if len(idx) >= n_attr:
                raise ArffError(f"every attribute of {path} is a label", xml_path, None)
    return idx


# --------------------------------------------------------------------------------------------
# schema: what each attribute becomes


def _column_of(a: _Attr, value: str | None) -> str:
    """How an error names the feature column of attribute ``a`` (``value``: its one-hot value)."""
    if value is None:
        return f"numeric attribute {_show(a.name)}"
    return f"the one-hot column of value {_show(value)} of nominal attribute {_show(a.name)}"


class _FeatureNames:
    """The feature columns' names in order; a name given twice is an ArffError naming both."""

    def __init__(self, path):
        self.path = path
        self.names: list[str] = []
        # feature name -> the attribute that gave it and its one-hot value (None: numeric)
        self.given: dict[str, tuple[_Attr, str | None]] = {}

    def add(self, name: str, a: _Attr, value: str | None) -> None:
        if name in self.given:
            first, first_value = self.given[name]
            raise ArffError(
                f"the feature name {_show(name)} is given twice: to "
                f"{_column_of(first, first_value)} (line {first.line}) and to "
                f"{_column_of(a, value)}; rename one of the attributes",
                self.path,
                a.line,
            )
        self.given[name] = (a, value)
        self.names.append(name)


class _Schema:
    """Parsing plan derived from the header and the options."""

    def __init__(self, h: _Header, label_idx: list[int], nominal: str, budget=None):
        self.header = h
        self.path = h.path
        attrs = h.attrs
        self.n_attr = len(attrs)
        self.label_idx = np.asarray(label_idx, dtype=np.intp)
        self.label_set = frozenset(label_idx)
        self.label_names = tuple(attrs[i].name for i in label_idx)
        for i in label_idx:
            self._check_label(attrs[i])
        # per attribute: is it parsed as a number (numeric features, all labels) or a nominal code
        self.is_code = np.zeros(self.n_attr, dtype=bool)
        self.codes: dict[int, dict[str, int]] = {}
        # value of an attribute omitted in a sparse row (Weka: 0, i.e. the first nominal value)
        self.sparse_default = np.zeros(self.n_attr)
        self.onehot: list[tuple[int, int, int]] = []  # (attribute, first out column, n values)
        self.col_attr: list[int] = []  # output column -> attribute index
        if budget is None and nominal == "onehot":
            budget = memory_budget()
        self.widest_onehot = 0
        names, out_num_in, out_num_out = self._plan_columns(attrs, nominal, budget)
        if not names:
            raise ArffError("the file has no feature attribute", self.path, h.data_line)
        self.feature_names = tuple(names)
        self.n_out = len(names)
        self.num_in = np.asarray(out_num_in, dtype=np.intp)
        self.num_out = np.asarray(out_num_out, dtype=np.intp)
        self.number_cols = np.flatnonzero(~self.is_code)
        self.code_cols = np.flatnonzero(self.is_code)
        self.all_numeric = not self.is_code.any()

    def _check_label(self, a: _Attr) -> None:
        """Refuses a label attribute that is neither nominal {0,1} nor numeric."""
        if a.kind == "nominal":
            bad = [v for v in a.values if v not in ("0", "1")]
            if bad:
                raise ArffError(
                    f"label attribute {_show(a.name)} must be nominal {{0,1}} or numeric; it "
                    f"declares the value {_show(bad[0])}",
                    self.path,
                    a.line,
                )
        elif a.kind != "numeric":
            raise ArffError(
                f"label attribute {_show(a.name)} has type {a.kind}; labels must be nominal "
                "{0,1} or numeric 0/1",
                self.path,
                a.line,
            )

    def _plan_columns(
        self, attrs: list[_Attr], nominal: str, budget
    ) -> tuple[list[str], list[int], list[int]]:
        """The feature columns in header order: their names, and for the numeric ones their
        attribute and output column; the one-hot plan of the nominal ones."""
        names = _FeatureNames(self.path)
        out_num_in: list[int] = []
        out_num_out: list[int] = []
        totals = (0, 0)  # characters of the one-hot names so far, and one-hot columns
        for j, a in enumerate(attrs):
            if j in self.label_set:
                if a.kind == "nominal":
                    self.sparse_default[j] = float(a.values[0])
                continue
            if a.kind == "numeric":
                out_num_in.append(j)
                out_num_out.append(len(names.names))
                names.add(a.name, a, None)
                self.col_attr.append(j)
            elif a.kind == "nominal":
                totals = self._plan_onehot(j, a, nominal, budget, names, totals)
            else:
                raise ArffError(
                    f"feature attribute {_show(a.name)} has type {a.kind}, which mlsom cannot use "
                    "(only numeric and nominal features are supported)",
                    self.path,
                    a.line,
                )
        return names.names, out_num_in, out_num_out

    def _plan_onehot(
        self, j: int, a: _Attr, nominal: str, budget, names: _FeatureNames, totals
    ) -> tuple[int, int]:
        """The one-hot columns of nominal feature attribute ``j``; ``totals``: the characters of
        the one-hot names and the one-hot columns before it, returned with its own added."""
        if nominal != "onehot":
            raise ArffError(
                f"feature attribute {_show(a.name)} is nominal ({len(a.values)} values); "
                "pass nominal='onehot' to expand it into 0/1 columns",
                self.path,
                a.line,
            )
        onehot_chars, onehot_values = totals
        onehot_chars += len(a.values) * (len(a.name) + 1) + sum(map(len, a.values))
        if onehot_chars > _ONEHOT_NAME_CHARS:
            raise ArffError(
                f"nominal attribute {_show(a.name)} ({len(a.values)} values): its one-hot "
                f"columns would bring the feature names to over {_ONEHOT_NAME_CHARS} "
                "characters",
                self.path,
                a.line,
            )
        onehot_values += len(a.values)
        # a column's name, its entries in the lists and dicts below: about 200 bytes
        check_memory(
            self.path,
            256 * onehot_values + onehot_chars,
            f"the names of {onehot_values} one-hot columns (nominal attribute "
            f"{_show(a.name)} at line {a.line} has {len(a.values)} values)",
            "leave nominal= at 'error'",
            budget=budget,
        )
        self.widest_onehot = max(self.widest_onehot, len(a.values))
        self.is_code[j] = True
        self.codes[j] = {v: float(k) for k, v in enumerate(a.values)}
        self.codes[j]["?"] = math.nan  # ('?' cannot be a declared value)
        self.onehot.append((j, len(names.names), len(a.values)))
        for v in a.values:
            names.add(f"{a.name}={v}", a, v)
            self.col_attr.append(j)
        return onehot_chars, onehot_values

    # ---- per-block parsing ------------------------------------------------------------------

    def block_rows(self, wanted: int) -> int:
        """Rows parsed together: ``wanted``, fewer when rows are wide (to bound the memory)."""
        return max(1, min(wanted, _BLOCK_CELLS // max(self.n_attr, self.n_out)))

    def row_bytes(self, itemsize: int = 8) -> int:
        """Bytes of one row of the result: its features (``itemsize`` each) and 0/1 labels."""
        return itemsize * self.n_out + len(self.label_names)

    def block_bytes(self, rows: int) -> int:
        """Bytes of the arrays made while parsing ``rows`` lines (the values of the attributes,
        the features, the widest one-hot expansion and the masks), and of the text."""
        per_row = 8 * self.n_attr + 10 * self.n_out + 9 * self.widest_onehot
        return rows * per_row + 4 * _BLOCK_CHARS

    def read_block(
        self, raw: list[str], linenos: list[int], missing: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Features and labels of the data lines ``raw`` (line numbers ``linenos``).

        On any error the block is parsed again one line at a time, so that the error reported
        is the one of the first faulty line, whatever its kind.
        """
        try:
            V, rows = self.parse_block(raw, linenos)
            return self.finish(V, rows, missing)
        except ArffError:
            pass
        for line, lineno in zip(raw, linenos, strict=True):
            V, rows = self._parse_careful([line], [lineno], bulk=False)
            self.finish(V, rows, missing)
        raise AssertionError("mlsom: an ARFF error vanished when parsing line by line")

    def parse_block(self, raw: list[str], linenos: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Parse data lines ``raw`` (line numbers ``linenos``).

        Returns ``V`` (rows x attributes; numbers, or codes of nominal features; NaN = missing)
        and the line number of each row.
        """
        if self.all_numeric and _only("\n".join(raw), _PLAIN_LINE_CHARS):
            V = _loadtxt_numeric(raw, self.n_attr)
            if V is not None:
                rows = np.asarray(linenos, dtype=np.int64)
                self._check_finite(V, raw, rows)
                return V, rows
        return self._parse_careful(raw, linenos)

    def _parse_careful(
        self, raw: list[str], linenos: list[int], bulk: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Line by line. With ``bulk`` (numeric files only), plain dense lines (no quote, ``?``,
        ``%`` or ``{``) are still parsed together by ``numpy.loadtxt``; if that fails, or any
        line is faulty, the block is parsed again without it, so that the first faulty line is
        the one reported."""
        path = self.path
        bulk = bulk and self.all_numeric
        plain_lines: list[str] = []
        plain_pos: list[int] = []
        dense_rows: list[list[str]] = []
        dense_pos: list[int] = []
        sparse: list[tuple[int, list[tuple[int, float]]]] = []  # (row, [(attribute, value)])
        kept: list[int] = []  # the line number of each row
        pending: ArffError | None = None
        for line, lineno in zip(raw, linenos, strict=True):
            s = line.strip()
            if not s or s[0] == "%":
                continue
            try:
                if s[0] == "{":
                    vals = [
                        (j, self._convert_one(j, tok, lineno))
                        for j, tok in self._sparse_items(s, lineno)
                    ]
                    sparse.append((len(kept), vals))
                elif "'" in s or '"' in s or "%" in s:
                    fields = [_unquote(t, path, lineno) for t in _split_fields(s, path, lineno)]
                    self._check_count(fields, lineno)
                    dense_pos.append(len(kept))
                    dense_rows.append(fields)
                elif bulk and "?" not in s and "{" not in s:
                    plain_pos.append(len(kept))
                    plain_lines.append(s)
                else:
                    # counted before the split: a line of a million commas is a million strings
                    n_values = s.count(",") + 1
                    if n_values != self.n_attr:
                        self._wrong_count(n_values, s[s.rfind(",") + 1 :], lineno)
                    fields = [f.strip() for f in s.split(",")]
                    dense_pos.append(len(kept))
                    dense_rows.append(fields)
            except ArffError as exc:
                if bulk:
                    return self._parse_careful(raw, linenos, bulk=False)
                pending = exc
                break
            kept.append(lineno)
        rows = np.asarray(kept, dtype=np.int64)
        V = np.empty((len(kept), self.n_attr))
        if plain_lines:
            P = None
            if _only("\n".join(plain_lines), _PLAIN_LINE_CHARS):
                P = _loadtxt_numeric(plain_lines, self.n_attr)
            if P is None:
                return self._parse_careful(raw, linenos, bulk=False)
            pos = np.asarray(plain_pos, dtype=np.intp)
            self._check_finite(P, plain_lines, rows[pos])
            V[pos] = P
        if dense_rows:
            pos = np.asarray(dense_pos, dtype=np.intp)
            V[pos] = self._convert_rows(dense_rows, rows[pos])
        for r, vals in sparse:
            V[r] = self.sparse_default
            for j, v in vals:
                V[r, j] = v
        if pending is not None:
            raise pending
        return V, rows

    def _check_count(self, fields: list[str], lineno: int) -> None:
        if len(fields) != self.n_attr:
            self._wrong_count(len(fields), fields[-1] if fields else "", lineno)

    def _wrong_count(self, n_values: int, last: str, lineno: int) -> None:
        if last.strip().startswith("{"):
            raise ArffError(
                "instance weights ({w} after the values) are not supported", self.path, lineno
            )
        raise ArffError(f"expected {self.n_attr} values, found {n_values}", self.path, lineno)

    def _check_finite(self, V: np.ndarray, lines: list[str], linenos: np.ndarray) -> None:
        """numpy.loadtxt reads a number beyond the range of a double as infinity: an error."""
        finite = np.isfinite(V)
        if finite.all():
            return
        r, j = (int(k) for k in np.argwhere(~finite)[0])
        tok = lines[r].split(",")[j].strip()
        raise ArffError(self._bad_number(j, tok), self.path, int(linenos[r]))

    def _sparse_items(self, s: str, lineno: int) -> list[tuple[int, str]]:
        path = self.path
        if "'" in s or '"' in s or "%" in s:
            fields = _split_fields(s[1:], path, lineno)
            # the closing brace ends the last field (quotes are kept by _split_fields)
            if not fields[-1].endswith("}"):
                tail = _strip_comment(s).rstrip()
                if not tail.endswith("}") and "}" in tail:
                    raise ArffError(
                        "instance weights or text after '}' are not supported", path, lineno
                    )
                raise ArffError("sparse row without closing '}'", path, lineno)
            fields[-1] = fields[-1][:-1].rstrip()
        else:
            close = s.find("}")
            if close < 0:
                raise ArffError("sparse row without closing '}'", path, lineno)
            if s[close + 1 :].strip():
                raise ArffError(
                    "instance weights or text after '}' are not supported", path, lineno
                )
            fields = s[1:close].split(",")
        if len(fields) == 1 and not fields[0].strip():
            return []
        items = []
        seen = set()
        for f in fields:
            f = f.strip()
            parts = f.split(None, 1)
            if len(parts) != 2:
                raise ArffError(f"sparse entry {_show(f)} is not 'index value'", path, lineno)
            index = parts[0]
            digits = index[1:] if index[0] == "-" else index
            if not (digits.isascii() and digits.isdigit()):
                raise ArffError(
                    f"sparse index {_show(index)} is not an integer (indices are written with the "
                    "digits 0-9)",
                    path,
                    lineno,
                )
            # (int() refuses more than 4300 digits: an index that long is out of range anyway)
            j = int(index) if len(digits) <= 19 else self.n_attr
            if not 0 <= j < self.n_attr:
                shown = index if len(digits) <= 19 else f"{index[:19]}... ({len(index)} digits)"
                raise ArffError(
                    f"sparse index {shown} out of range: the file declares {self.n_attr} "
                    f"attributes (indices 0-{self.n_attr - 1})",
                    path,
                    lineno,
                )
            if j in seen:
                raise ArffError(f"sparse index {j} appears twice", path, lineno)
            seen.add(j)
            items.append((j, _unquote(parts[1].strip(), path, lineno)))
        return items

    def _convert_one(self, j: int, tok: str, lineno: int) -> float:
        if self.is_code[j]:
            code = self.codes[j].get(tok)
            if code is None:
                raise ArffError(self._bad_nominal(j, tok), self.path, lineno)
            return code
        if tok == "?":
            return math.nan
        value = _arff_float(tok)
        if value is None:
            raise ArffError(self._bad_number(j, tok), self.path, lineno)
        return value

    def _bad_number(self, j: int, tok: str) -> str:
        a = self.header.attrs[j]
        if j in self.label_set:
            return f"label {_show(a.name)} has the value {_show(tok)}; labels must be 0 or 1"
        return f"value {_show(tok)} of numeric attribute {_show(a.name)}{_why_not_a_number(tok)}"

    def _bad_nominal(self, j: int, tok: str) -> str:
        a = self.header.attrs[j]
        return (
            f"value {_show(tok)} is not one of the declared values of nominal attribute "
            f"{_show(a.name)}"
        )

    def _convert_rows(self, rows: list[list[str]], linenos: np.ndarray) -> np.ndarray:
        """Tokens (rows x attributes) -> numbers/codes, column by column."""
        V = np.empty((len(rows), self.n_attr))
        columns = list(zip(*rows, strict=True))
        for j in self.number_cols.tolist():
            V[:, j] = self._numbers(j, columns[j], linenos)
        for j in self.code_cols.tolist():
            V[:, j] = self._codes(j, columns[j], linenos)
        return V

    def _numbers(self, j: int, col: Sequence[str], linenos: np.ndarray) -> np.ndarray:
        """The values of the tokens ``col`` of a numeric attribute ('?': NaN)."""
        # One test of all the tokens for the characters of ARFF numbers: '?' and the separating
        # commas pass it, but float() refuses a token holding a comma, or '?' and more.
        text = ",".join(col)
        if _only(text, _NUMBER_CHARS + b"?,"):
            values = [math.nan if t == "?" else t for t in col] if "?" in text else col
            try:
                out = np.array(values, dtype=np.float64)
            except ValueError:
                out = None
            if out is not None and not np.isinf(out).any():
                return out
        for r, t in enumerate(col):
            if t != "?" and _arff_float(t) is None:
                raise ArffError(self._bad_number(j, t), self.path, int(linenos[r]))
        raise AssertionError("mlsom: numpy and float() disagree on an ARFF number")

    def _codes(self, j: int, col: Sequence[str], linenos: np.ndarray) -> np.ndarray:
        """The codes of the tokens ``col`` of a nominal feature ('?': NaN)."""
        codes = self.codes[j]
        out = np.array([codes.get(t, -1.0) for t in col], dtype=np.float64)
        unknown = np.flatnonzero(out < 0)
        if unknown.size:
            r = int(unknown[0])
            raise ArffError(self._bad_nominal(j, col[r]), self.path, int(linenos[r]))
        return out

    # ---- from attribute values to X, Y ------------------------------------------------------

    def finish(
        self, V: np.ndarray, linenos: np.ndarray, missing: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Split ``V`` into features (one-hot expanded) and validated 0/1 labels."""
        n = V.shape[0]
        L = V[:, self.label_idx]
        bad = (L != 0) & (L != 1)  # NaN compares unequal: a missing label is bad too
        first_label_bad = np.inf
        if bad.any():
            first_label_bad = int(np.flatnonzero(bad.any(axis=1))[0])
        X = np.empty((n, self.n_out))
        X[:, self.num_out] = V[:, self.num_in]
        for j, start, m in self.onehot:
            codes = V[:, j]
            block = (codes[:, None] == np.arange(m)).astype(np.float64)
            block[np.isnan(codes)] = np.nan
            X[:, start : start + m] = block
        first_missing = np.inf
        nan = None
        if missing == "error" or missing == "zero":
            nan = np.isnan(X)
            if missing == "error" and nan.any():
                first_missing = int(np.flatnonzero(nan.any(axis=1))[0])
        if first_label_bad <= first_missing and first_label_bad < np.inf:
            r = int(first_label_bad)
            c = int(np.flatnonzero(bad[r])[0])
            name = self.label_names[c]
            v = L[r, c]
            if np.isnan(v):
                msg = f"label {_show(name)} is missing ('?'); labels may not be missing"
            else:
                msg = f"label {_show(name)} has the value {v:g}; labels must be 0 or 1"
            raise ArffError(msg, self.path, int(linenos[r]))
        if first_missing < np.inf:
            r = int(first_missing)
            c = int(np.flatnonzero(nan[r])[0])
            name = self.header.attrs[self.col_attr[c]].name
            raise ArffError(
                f"missing value ('?') of attribute {_show(name)}; pass missing='mean' or "
                "missing='zero' to impute",
                self.path,
                int(linenos[r]),
            )
        if missing == "zero" and nan is not None and nan.any():
            X[nan] = 0.0
        return X, L.astype(np.uint8)


# --------------------------------------------------------------------------------------------
# public functions


def _check_path(name, path):
    # an int would be taken for a file descriptor by open()
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise TypeError(f"{name} must be a str or an os.PathLike of str, got {path!r}")


def _in_dtype(X, dt, path, feature_names):
    """X as ``dt``: a value beyond the range of a narrower float type (float32, float16) is an
    ArffError, not an infinity."""
    out = np.ascontiguousarray(X, dtype=dt) if dt == X.dtype else None
    if out is not None:
        return out
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(X, dtype=dt)
    if out.size and not np.isfinite(out).all():
        bad = np.isinf(out) & np.isfinite(X)
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise ArffError(
                f"the value {float(X[i, j])!r} of feature {feature_names[j]!r} (data row "
                f"{i + 1} of this read) is beyond the range of {dt}; read the file with "
                "dtype=float64",
                path,
                None,
            )
    return out


def _check_options(path, nominal, missing, dtype, encoding, max_line_length, xml=None) -> np.dtype:
    _check_path("path", path)
    if xml is not None:
        _check_path("xml", xml)
    if not isinstance(nominal, str) or nominal not in ("error", "onehot"):
        raise ValueError(f"nominal must be 'error' or 'onehot', got {nominal!r}")
    if not isinstance(missing, str) or missing not in ("error", "mean", "zero"):
        raise ValueError(f"missing must be 'error', 'mean' or 'zero', got {missing!r}")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a floating-point type, got {dtype!r}") from None
    if dt.kind != "f":
        raise ValueError(f"dtype must be a floating-point type, got {dt}")
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be the name of a text encoding, got {encoding!r}")
    try:
        # LookupError for unknown names and for codecs that are no text encoding ("hex")
        io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    except LookupError:
        raise ValueError(f"encoding {encoding!r} is not a known text encoding") from None
    if (
        isinstance(max_line_length, bool)
        or not isinstance(max_line_length, numbers.Integral)
        or max_line_length < 1
    ):
        raise ValueError(f"max_line_length must be a positive integer, got {max_line_length!r}")
    return dt


def _prepare(
    path, labels, label_location, xml, nominal, encoding, max_line_length, budget
) -> _Schema:
    with _open_lines(path, encoding, max_line_length) as text:
        header = _read_header(text, path)
    idx = _label_indices(header, labels, label_location, xml)
    return _Schema(header, idx, nominal, budget)


def _blocks(
    schema: _Schema,
    encoding: str,
    block_lines: int,
    missing: str,
    max_line_length: int,
    before=None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(X, Y) per block of data lines; X may hold NaN when missing == 'mean'. ``before(n)`` is
    called with the number of lines of each block before it is parsed."""
    rows = schema.block_rows(block_lines)
    with _open_lines(schema.path, encoding, max_line_length) as text:
        text.skip_lines(schema.header.data_line)
        text.in_header = False
        while True:
            lines, linenos = text.take(rows, _BLOCK_CHARS)
            if not lines:
                return
            if before is not None:
                before(len(lines))
            X, Y = schema.read_block(lines, linenos, missing)
            if X.shape[0]:
                yield X, Y


class _ColumnMeans:
    """Means of the observed (non-NaN) values per column, independent of how rows are chunked.

    Rows are summed in fixed blocks of ``_MEAN_BLOCK`` rows counted from the start of the file,
    so load_arff and iter_arff (any chunk_size) get bit-identical means.
    """

    def __init__(self, n_cols: int):
        self.sums = np.zeros(n_cols)
        self.counts = np.zeros(n_cols, dtype=np.int64)
        self.pending: list[np.ndarray] = []
        self.n_pending = 0

    def _add_block(self, B: np.ndarray) -> None:
        B = np.ascontiguousarray(B)
        nan = np.isnan(B)
        self.sums += np.where(nan, 0.0, B).sum(axis=0)
        self.counts += B.shape[0] - nan.sum(axis=0)

    def add(self, X: np.ndarray) -> None:
        if not self.n_pending:  # X starts a block: its whole blocks are summed where they lie
            k = (X.shape[0] // _MEAN_BLOCK) * _MEAN_BLOCK
            for start in range(0, k, _MEAN_BLOCK):
                self._add_block(X[start : start + _MEAN_BLOCK])
            X = X[k:]
            if not X.shape[0]:
                return
        self.pending.append(X)
        self.n_pending += X.shape[0]
        if self.n_pending < _MEAN_BLOCK:
            return
        A = np.concatenate(self.pending)
        k = (A.shape[0] // _MEAN_BLOCK) * _MEAN_BLOCK
        for start in range(0, k, _MEAN_BLOCK):
            self._add_block(A[start : start + _MEAN_BLOCK])
        self.pending = [A[k:]]
        self.n_pending = A.shape[0] - k

    def means(self) -> np.ndarray:
        if self.n_pending:
            self._add_block(np.concatenate(self.pending))
            self.pending, self.n_pending = [], 0
        with np.errstate(invalid="ignore", divide="ignore"):
            means = self.sums / self.counts
        means[self.counts == 0] = 0.0
        return means


def _fill_nan(X: np.ndarray, fill: np.ndarray) -> None:
    for start in range(0, X.shape[0], _MEAN_BLOCK):  # (a mask of one block at a time)
        B = X[start : start + _MEAN_BLOCK]
        np.copyto(B, fill, where=np.isnan(B))


def _load_row_bytes(schema: _Schema, dt: np.dtype, missing: str) -> tuple[int, int]:
    """(bytes of a row read, bytes of a row at the end of load_arff): the blocks and their
    concatenation, then the conversion to ``dt`` and the mask of the missing values."""
    row = schema.row_bytes()
    per_row = max(2 * row, row + (dt.itemsize + 1 if dt != np.float64 else 0) * schema.n_out)
    if missing == "mean":
        per_row += schema.n_out
    return row, per_row


def _read_dataset(
    schema: _Schema, path, dt: np.dtype, missing: str, encoding: str, max_line_length: int, budget
) -> MultilabelDataset:
    """Every data line of the file: X of ``dt`` (missing values imputed) and Y, the memory
    checked against ``budget`` before each block."""
    Xs: list[np.ndarray] = []
    Ys: list[np.ndarray] = []
    n_rows = 0
    row, per_row = _load_row_bytes(schema, dt, missing)
    work = schema.block_bytes(schema.block_rows(_LOAD_BLOCK_LINES))

    def before(n_lines: int) -> None:
        check_memory(
            path,
            (n_rows + n_lines) * per_row + work,
            f"the first {n_rows + n_lines} data lines ({schema.n_out} features"
            f"{'' if dt == np.float64 else f' of {dt}'})",
            "read the file in chunks with iter_arff",
            budget=budget,
        )

    try:
        for X, Y in _blocks(schema, encoding, _LOAD_BLOCK_LINES, missing, max_line_length, before):
            Xs.append(X)
            Ys.append(Y)
            n_rows += X.shape[0]
        if Xs:
            X = np.concatenate(Xs) if len(Xs) > 1 else Xs[0]
            Y = np.concatenate(Ys) if len(Ys) > 1 else Ys[0]
            Xs.clear()
            Ys.clear()
        else:
            X = np.empty((0, schema.n_out))
            Y = np.empty((0, len(schema.label_names)), dtype=np.uint8)
        if missing == "mean" and np.isnan(X).any():
            acc = _ColumnMeans(schema.n_out)
            acc.add(X)
            _fill_nan(X, acc.means())
        X = _in_dtype(X, dt, path, schema.feature_names)
    except MemoryError as exc:
        if hasattr(exc, "nbytes"):  # refused by check_memory: it names the file
            raise
        # the memory was taken by other work meanwhile: the error still names the file
        Xs.clear()
        Ys.clear()
        raise MemoryError(
            f"{os.fspath(path)}: out of memory with {n_rows} rows read ({schema.n_out} features, "
            f"{_format_bytes(n_rows * row)}): {exc or 'no more memory'}; read the file in "
            "chunks with iter_arff"
        ) from None
    return MultilabelDataset(
        X=X,
        Y=np.ascontiguousarray(Y, dtype=np.uint8),
        feature_names=schema.feature_names,
        label_names=schema.label_names,
        relation=schema.header.relation,
        source=os.fspath(path),
    )


def load_arff(
    path: PathLike,
    *,
    labels: Sequence[str] | None = None,
    label_location: tuple[Literal["first", "last"], int] | None = None,
    xml: PathLike | None = None,
    nominal: Literal["error", "onehot"] = "error",
    missing: Literal["error", "mean", "zero"] = "error",
    dtype: Any = np.float64,
    encoding: str = "utf-8",
    max_line_length: int = _MAX_LINE_LENGTH,
) -> MultilabelDataset:
    """Load a multi-label ARFF file (Mulan or MEKA convention) into memory.

    Parameters
    ----------
    path : str or os.PathLike
        The ARFF file. gzip, bzip2 and xz files (``.gz``, ``.bz2``, ``.xz``) are decompressed
        transparently; the format is recognised by its magic bytes.
    labels : sequence of str, optional
        Names of the label attributes. The columns of ``Y`` follow the header order, not the
        order of this list.
    label_location : ("first" | "last", int), optional
        The labels are the first or last n attributes.
    xml : str or os.PathLike, optional
        Mulan XML file naming the labels. Labels are matched by name; ``Y``'s column order is the
        ARFF header order.
    nominal : {"error", "onehot"}, default "error"
        What to do with a nominal *feature*: raise :class:`ArffError` naming it, or expand it into
        one 0/1 column per declared value, named ``"attribute=value"``. A name that another
        feature column already has (a numeric attribute ``"c=x"`` beside ``c {x}``) is an
        :class:`ArffError` naming both attributes.
    missing : {"error", "mean", "zero"}, default "error"
        Missing feature values (``?``): raise :class:`ArffError` naming the line and attribute,
        or impute the column mean of the observed values (0 for a column with no observed value),
        or 0. A missing nominal feature gives NaN in each of its one-hot columns before imputation
        (so "mean" imputes the value frequencies). Missing labels are always an error.
    dtype : floating dtype, default numpy.float64
        dtype of ``X``.
    encoding : str, default "utf-8"
        Text encoding of the file.
    max_line_length : int, default 10_000_000
        The longest line accepted, in characters (after decompression and decoding); a longer
        line raises :class:`ArffError` naming it, before it is read whole. The default is far
        above real files (a dense row of 100,000 numbers, a sparse row of 500,000 entries).

    Returns
    -------
    MultilabelDataset
        ``X`` (n x features, ``dtype``), ``Y`` (n x labels, uint8), names, relation, source.

    Raises
    ------
    ArffError
        (a ``ValueError``) for a malformed file: a row of the wrong length, a non-number in a
        numeric column, a label other than 0/1, an unknown, string or date attribute, no
        ``@data``, a sparse index out of range, a label of the XML missing from the header,
        bytes that are not text in ``encoding``, a NUL character, a line longer than
        ``max_line_length``, a damaged or truncated compressed file or one that expands over
        100,000-fold, an XML file in an encoding the XML parser cannot read, a path that is not
        a regular file (a directory, a FIFO, a device), ... It names the file and, where one
        applies, the line.
    ValueError
        for invalid options (TypeError for options of the wrong type).
    OSError
        ``FileNotFoundError`` if ``path`` or ``xml`` does not exist; an error of the system (a
        symbolic link loop, a permission denied, an I/O error) names the file and the line.
    MemoryError
        before a block of rows is parsed, when the rows so far and the block would need more
        memory than the process could get when reading started (the smallest of the physical
        memory, ``RLIMIT_AS`` and the control group's limit, less what the process held). The
        message names the file, the estimate and the limit.

    Notes
    -----
    Labels are taken, in this order of precedence, from ``labels=``, ``label_location=`` or
    ``xml=`` (at most one may be given); else from a MEKA ``-C n`` in the relation name; else from
    the Mulan XML file ``<stem>.xml`` next to the ARFF (``yeast.arff.gz`` -> ``yeast.xml``; for
    ``scene-train.arff`` also ``scene.xml``). Label attributes must be nominal with values among
    {0, 1}, or numeric with values 0 or 1.

    Rows may be dense or sparse (``{index value, ...}``; omitted values are 0, for a nominal
    attribute its first declared value, as in Weka). Values and names may be quoted with ``'`` or
    ``"`` and backslash escapes; ``%`` starts a comment; blank lines are ignored; keywords and
    type names are case-insensitive. Instance weights, string, date and relational attributes are
    not supported. Numbers are read as ARFF writes them (ASCII digits, sign, point, exponent):
    ``nan`` and ``inf`` in any spelling, ``1_000``, blanks inside quotes, non-ASCII digits and
    values beyond the range of a double (``1e999``) are errors naming the file, line and attribute.

    Files from untrusted sources: docs/datasets.md says what the reader guards against. The
    result grows with the file (a small compressed file can hold millions of rows): read such
    files with :func:`iter_arff`, which holds one chunk at a time, and stop when it is enough.
    """
    dt = _check_options(path, nominal, missing, dtype, encoding, max_line_length, xml)
    budget = memory_budget()  # a small file can expand to rows beyond any memory
    schema = _prepare(path, labels, label_location, xml, nominal, encoding, max_line_length, budget)
    return _read_dataset(schema, path, dt, missing, encoding, max_line_length, budget)


class ArffChunkIterator(Iterator[tuple[np.ndarray, np.ndarray]]):
    """Iterator of ``(X_chunk, Y_chunk)`` over an ARFF file, returned by :func:`iter_arff`.

    The header is read (and checked) when the iterator is created; the data is read lazily.

    Attributes
    ----------
    feature_names, label_names : tuple of str
        Column names of the chunks.
    relation : str
        The ``@relation`` name.
    source : str
        The path.
    """

    def __init__(
        self,
        path,
        chunk_size,
        labels,
        label_location,
        xml,
        nominal,
        missing,
        dtype,
        encoding,
        max_line_length=_MAX_LINE_LENGTH,
    ):
        self._dtype = _check_options(path, nominal, missing, dtype, encoding, max_line_length, xml)
        if (
            isinstance(chunk_size, bool)
            or not isinstance(chunk_size, numbers.Integral)
            or chunk_size < 1
        ):
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        chunk_size = int(chunk_size)
        budget = memory_budget()
        schema = self._schema = _prepare(
            path, labels, label_location, xml, nominal, encoding, max_line_length, budget
        )
        self.feature_names = schema.feature_names
        self.label_names = schema.label_names
        self.relation = schema.header.relation
        self.source = os.fspath(path)
        # while a chunk is made: the chunk the caller holds, the blocks read and their
        # concatenation (a chunk and a block each), the chunk in dtype; or, for the column means
        # of missing="mean", the blocks pending and their concatenation
        block = schema.block_rows(chunk_size)
        row = schema.row_bytes()
        held = 3 * (chunk_size + block) * row
        if self._dtype != np.float64:
            held += chunk_size * (self._dtype.itemsize + 1) * schema.n_out
        if missing == "mean":
            held = max(held, 2 * (_MEAN_BLOCK + block) * row)
        check_memory(
            path,
            held + schema.block_bytes(block),
            f"reading chunks of {chunk_size} rows ({schema.n_out} features)",
            "pass a smaller chunk_size",
            budget=budget,
        )
        self._chunk_size = chunk_size
        self._encoding = encoding
        self._max_line_length = max_line_length
        self._missing = missing
        self._gen = self._generate()

    def _generate(self):
        schema = self._schema
        size = self._chunk_size
        fill = None
        if self._missing == "mean":  # first pass: column means of the observed values
            acc = _ColumnMeans(schema.n_out)
            for X, _ in _blocks(schema, self._encoding, size, "mean", self._max_line_length):
                acc.add(X)
            fill = acc.means()
        bufX: list[np.ndarray] = []
        bufY: list[np.ndarray] = []
        held = 0
        for X, Y in _blocks(schema, self._encoding, size, self._missing, self._max_line_length):
            if fill is not None:
                _fill_nan(X, fill)
            bufX.append(X)
            bufY.append(Y)
            held += X.shape[0]
            if held < size:
                continue
            X = np.concatenate(bufX) if len(bufX) > 1 else bufX[0]
            Y = np.concatenate(bufY) if len(bufY) > 1 else bufY[0]
            start = 0
            while held - start >= size:
                yield self._out(X[start : start + size], Y[start : start + size])
                start += size
            bufX, bufY = ([X[start:]], [Y[start:]]) if start < held else ([], [])
            held -= start
        if held:
            X = np.concatenate(bufX) if len(bufX) > 1 else bufX[0]
            Y = np.concatenate(bufY) if len(bufY) > 1 else bufY[0]
            yield self._out(X, Y)

    def _out(self, X, Y):
        X = _in_dtype(X, self._dtype, self.source, self._schema.feature_names)
        return (X, np.ascontiguousarray(Y))

    def __iter__(self):
        return self

    def __next__(self) -> tuple[np.ndarray, np.ndarray]:
        try:
            return next(self._gen)
        except MemoryError as exc:
            if hasattr(exc, "nbytes"):
                raise
            raise MemoryError(
                f"{self.source}: out of memory reading a chunk of {self._chunk_size} rows "
                f"({self._schema.n_out} features): {exc or 'no more memory'}; pass a smaller "
                "chunk_size"
            ) from None

    def close(self) -> None:
        """Stop reading and close the file."""
        self._gen.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_arff(
    path: PathLike,
    chunk_size: int = 10_000,
    *,
    labels: Sequence[str] | None = None,
    label_location: tuple[Literal["first", "last"], int] | None = None,
    xml: PathLike | None = None,
    nominal: Literal["error", "onehot"] = "error",
    missing: Literal["error", "mean", "zero"] = "error",
    dtype: Any = np.float64,
    encoding: str = "utf-8",
    max_line_length: int = _MAX_LINE_LENGTH,
) -> ArffChunkIterator:
    """Read a multi-label ARFF file in chunks of rows, with bounded memory.

    The file is never held whole: about ``chunk_size`` lines of text and two chunks of parsed rows
    are in memory at a time. The chunks, concatenated, are exactly ``load_arff(path, ...).X`` and
    ``.Y`` (same options).

    Parameters
    ----------
    path : str or os.PathLike
        The ARFF file (optionally gzip, bzip2 or xz compressed).
    chunk_size : int, default 10000
        Rows per chunk; the last chunk may be shorter.
    labels, label_location, xml, nominal, missing, dtype, encoding, max_line_length
        As in :func:`load_arff`. ``missing="mean"`` reads the file **twice**: a first pass
        computes the column means of the observed values (it also checks the whole file, so a
        malformed line raises before the first chunk), the second pass yields the imputed chunks.

    Returns
    -------
    ArffChunkIterator
        An iterator of ``(X_chunk, Y_chunk)``; its ``feature_names``, ``label_names``,
        ``relation`` and ``source`` are available before the first chunk. Header errors raise
        when ``iter_arff`` is called; errors in the data raise from ``next()`` when the faulty
        line is reached. A ``MemoryError`` naming the file raises when ``iter_arff`` is called if
        reading chunks of ``chunk_size`` rows (about three held at a time) would need more memory
        than the process can get.

    Examples
    --------
    >>> for X, Y in iter_arff("yeast.arff.gz", chunk_size=500):  # doctest: +SKIP
    ...     model.partial_fit(X, Y)
    """
    return ArffChunkIterator(
        path,
        chunk_size,
        labels,
        label_location,
        xml,
        nominal,
        missing,
        dtype,
        encoding,
        max_line_length,
    )
