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
The ``@data`` section is read in blocks of lines. In a file whose attributes are all numeric (or
0/1 labels), a block whose text holds no quote, ``?``, ``%`` or ``{`` is parsed in one call to
``numpy.loadtxt``. Otherwise the block is scanned line by line: lines that need care (quotes with
escapes, sparse rows, ``?``, comments) are tokenised in Python, the plain dense lines among them
still go to ``numpy.loadtxt`` together, and the tokens of dense rows are converted per column with
numpy. When a block holds an error it is parsed again one line at a time, so that the reported
line is the first faulty one.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import numbers
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal
from xml.parsers import expat

import numpy as np

__all__ = ["ArffError", "ArffChunkIterator", "MultilabelDataset", "iter_arff", "load_arff"]

PathLike = str | os.PathLike

# Lines read per block in load_arff (iter_arff reads chunk_size lines per block).
_LOAD_BLOCK_LINES = 20_000
# Rows per block when summing columns for missing="mean".
_MEAN_BLOCK = 4096
_SPECIAL = ("?", "'", '"', "%", "{")
_NUMERIC_TYPES = {"numeric", "real", "integer"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "%": "%"}
_MEKA_C = re.compile(r"(?:^|\s)-C\s+([+-]?\d+)(?=\s|$)")
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
        One name per column of ``X``; a one-hot column of nominal attribute ``a`` with value ``v``
        is named ``"a=v"``.
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


def _open_text(path: PathLike, encoding: str) -> io.TextIOBase:
    """Open ``path`` as text; gzip, bzip2 and xz are recognised by their magic bytes (whatever the
    suffix), legacy ``.lzma`` files by their suffix."""
    with open(path, "rb") as fh:
        magic = fh.read(6)
    compression = None
    if magic[:2] == b"\x1f\x8b":
        raw, compression = gzip.open(path, "rb"), "gzip"
    elif magic[:3] == b"BZh":
        raw, compression = bz2.open(path, "rb"), "bzip2"
    elif magic == b"\xfd7zXZ\x00" or os.fspath(path).lower().endswith(".lzma"):
        raw, compression = lzma.open(path, "rb"), "xz/lzma"
    else:
        raw = open(path, "rb")  # noqa: SIM115 (closed by the wrapper)
    # Undecodable bytes become lone surrogates (U+DC80-U+DCFF), which no valid text holds: the
    # readers find them line by line (see _undecodable), so that the error names the exact line.
    text = io.TextIOWrapper(raw, encoding=encoding, errors="surrogateescape", newline=None)
    text.mlsom_compression = compression
    return text


_UNDECODABLE = re.compile("[\udc80-\udcff]")


def _undecodable(line: str, encoding: str) -> str | None:
    """The error message for a line that holds bytes undecodable in ``encoding``, else None."""
    m = _UNDECODABLE.search(line)
    if m is None:
        return None
    byte = ord(m.group(0)) - 0xDC00
    return (
        f"cannot decode the line as {encoding}: byte 0x{byte:02x} at character {m.start() + 1} "
        "(pass encoding=)"
    )


# What the decompressors raise for damaged or truncated data: gzip.BadGzipFile and bz2's
# "Invalid data stream" are OSErrors, a truncated stream raises EOFError, a damaged deflate stream
# zlib.error, a damaged xz stream lzma.LZMAError.
_DECOMPRESSION_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)


@contextmanager
def _decompressing(fh, path, lines_read=0):
    """Turn the errors of a damaged compressed file, raised while ``fh`` is read, into
    :class:`ArffError`; the I/O errors of an uncompressed file pass through unchanged.

    ``lines_read``: the lines already read from ``fh`` (the damage lies after them)."""
    try:
        yield
    except _DECOMPRESSION_ERRORS as exc:
        compression = getattr(fh, "mlsom_compression", None)
        if compression is None:
            raise
        where = f" after line {lines_read}" if lines_read else ""
        raise ArffError(
            f"cannot decompress the file ({compression} data damaged or truncated{where}): {exc}",
            path,
            None,
        ) from None


# --------------------------------------------------------------------------------------------
# tokenising


_QUOTED = r"'(?:[^'\\]|\\.)*'" + "|" + r'"(?:[^"\\]|\\.)*"'
_FIELD_PART = rf"""(?:{_QUOTED}|[^,'"%])*"""
# a whole line: fields (quoted strings and other characters) separated by commas, then an
# optional comment; and one field of a line without comment
_LINE_RE = re.compile(rf"((?:{_FIELD_PART},)*{_FIELD_PART})(?:%.*)?", re.S)
_FIELD_RE = re.compile(rf"(?:^|,)({_FIELD_PART})", re.S)
_ESCAPE_RE = re.compile(r"\\(.)", re.S)


def _split_fields(s: str, path, lineno: int) -> list[str]:
    """Split a line at commas outside quotes; stop at ``%`` outside quotes. Fields are stripped
    but keep their quotes (see :func:`_unquote`)."""
    m = _LINE_RE.fullmatch(s)
    if m is None:
        return _split_fields_slowly(s, path, lineno)
    return [f.strip() for f in _FIELD_RE.findall(m.group(1))]


def _split_fields_slowly(s: str, path, lineno: int) -> list[str]:
    """Character by character: used for lines the regular expressions reject, to name the
    problem (an unterminated quote)."""
    fields: list[str] = []
    buf: list[str] = []
    quote = None
    i = 0
    n = len(s)
    while i < n:
        ch = s[i]
        if quote is not None:
            buf.append(ch)
            if ch == "\\" and i + 1 < n:
                buf.append(s[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch == "'" or ch == '"':
            quote = ch
            buf.append(ch)
        elif ch == ",":
            fields.append("".join(buf).strip())
            buf = []
        elif ch == "%":
            break
        else:
            buf.append(ch)
        i += 1
    if quote is not None:
        raise ArffError(f"unterminated {quote} quote", path, lineno)
    fields.append("".join(buf).strip())
    return fields


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
        elif re.fullmatch(rf"(?:[^{q}\\]|\\.)*", body, re.S):
            return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)
    # malformed: find out how
    i = 1
    n = len(tok)
    while i < n:
        ch = tok[i]
        if ch == "\\":
            i += 2
            continue
        if ch == q:
            raise ArffError(f"text after the closing quote in {tok!r}", path, lineno)
        i += 1
    raise ArffError(f"unterminated {q} quote in {tok!r}", path, lineno)


def _strip_comment(s: str) -> str:
    """Text before the first ``%`` outside quotes."""
    if "%" not in s:
        return s
    quote = None
    i = 0
    while i < len(s):
        ch = s[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "%":
            return s[:i]
        i += 1
    return s


def _take_name(s: str, path, lineno: int) -> tuple[str, str]:
    """Split ``s`` into a leading (possibly quoted) name and the rest."""
    s = s.lstrip()
    if not s:
        raise ArffError("missing name", path, lineno)
    if s[0] in "'\"":
        q = s[0]
        i = 1
        while i < len(s):
            if s[i] == "\\":
                i += 2
                continue
            if s[i] == q:
                return _unquote(s[: i + 1], path, lineno), s[i + 1 :]
            i += 1
        raise ArffError(f"unterminated {q} quote in name", path, lineno)
    m = re.match(r"[^\s{]+", s)
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
        raise ArffError(f"attribute {name!r} has no type", path, lineno)
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise ArffError(f"nominal attribute {name!r}: missing closing '}}'", path, lineno)
        inner = spec[1:-1]
        values = tuple(_unquote(v, path, lineno) for v in _split_fields(inner, path, lineno))
        if not inner.strip() or any(v == "" for v in values):
            raise ArffError(
                f"nominal attribute {name!r} has an empty value list or value", path, lineno
            )
        if len(set(values)) != len(values):
            raise ArffError(f"nominal attribute {name!r} repeats a value", path, lineno)
        if "?" in values:  # a '?' in the data is always read as a missing value, quoted or not
            raise ArffError(
                f"nominal attribute {name!r} declares the value '?', which ARFF reserves for "
                "missing values",
                path,
                lineno,
            )
        return _Attr(name, "nominal", lineno, values)
    word = spec.split()[0].lower()
    if word in _NUMERIC_TYPES:
        if len(spec.split()) > 1:
            raise ArffError(f"attribute {name!r}: unexpected text after {word!r}", path, lineno)
        return _Attr(name, "numeric", lineno)
    if word in ("string", "date", "relational"):
        return _Attr(name, word, lineno)
    raise ArffError(f"attribute {name!r} has an unknown type {spec!r}", path, lineno)


def _read_header(fh, path) -> _Header:
    relation = None
    attrs: list[_Attr] = []
    lineno = 0
    for raw in fh:
        lineno += 1
        bad = _undecodable(raw, fh.encoding)
        if bad is not None:
            raise ArffError(bad, path, lineno)
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
                        f"attribute name {a.name!r} is declared twice (lines {seen[a.name]} "
                        f"and {a.line})",
                        path,
                        a.line,
                    )
                seen[a.name] = a.line
            return _Header(os.fspath(path), relation, attrs, lineno)
        elif s.startswith("@"):
            raise ArffError(f"unknown keyword {s.split()[0]!r}", path, lineno)
        else:
            raise ArffError(
                f"unexpected text in the header: {s[:40]!r} (expected @relation, @attribute "
                "or @data)",
                path,
                lineno,
            )
    raise ArffError("no @data section (end of file reached in the header)", path, lineno or 1)


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
        with open(xml_path, "rb") as fh:
            parser.ParseFile(fh)
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
                f"label {name!r} is listed twice (lines {seen[name]} and {line})", xml_path, line
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
        if os.path.isfile(p):
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
            n = int(meka.group(1))
            if n == 0 or abs(n) >= n_attr:
                raise ArffError(
                    f"relation {h.relation!r}: -C {n} is not a valid number of labels for "
                    f"{n_attr} attributes",
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
                        f"label {name!r} is not an attribute of {path} ({span})", xml_path, line
                    )
                idx.append(by_name[name])
            idx.sort()
            if len(idx) >= n_attr:
                raise ArffError(f"every attribute of {path} is a label", xml_path, None)
    return idx


# --------------------------------------------------------------------------------------------
# schema: what each attribute becomes


class _Schema:
    """Parsing plan derived from the header and the options."""

    def __init__(self, h: _Header, label_idx: list[int], nominal: str):
        self.header = h
        self.path = h.path
        attrs = h.attrs
        self.n_attr = len(attrs)
        self.label_idx = np.asarray(label_idx, dtype=np.intp)
        label_set = set(label_idx)
        self.label_names = tuple(attrs[i].name for i in label_idx)
        for i in label_idx:
            a = attrs[i]
            if a.kind == "nominal":
                bad = [v for v in a.values if v not in ("0", "1")]
                if bad:
                    raise ArffError(
                        f"label attribute {a.name!r} must be nominal {{0,1}} or numeric; it "
                        f"declares the value {bad[0]!r}",
                        self.path,
                        a.line,
                    )
            elif a.kind != "numeric":
                raise ArffError(
                    f"label attribute {a.name!r} has type {a.kind}; labels must be nominal "
                    "{0,1} or numeric 0/1",
                    self.path,
                    a.line,
                )
        # per attribute: is it parsed as a number (numeric features, all labels) or a nominal code
        self.is_code = np.zeros(self.n_attr, dtype=bool)
        self.codes: dict[int, dict[str, int]] = {}
        # value of an attribute omitted in a sparse row (Weka: 0, i.e. the first nominal value)
        self.sparse_default = np.zeros(self.n_attr)
        feature_names: list[str] = []
        out_num_in: list[int] = []
        out_num_out: list[int] = []
        self.onehot: list[tuple[int, int, int]] = []  # (attribute, first out column, n values)
        self.col_attr: list[int] = []  # output column -> attribute index
        for j, a in enumerate(attrs):
            if j in label_set:
                if a.kind == "nominal":
                    self.sparse_default[j] = float(a.values[0])
                continue
            if a.kind == "numeric":
                out_num_in.append(j)
                out_num_out.append(len(feature_names))
                feature_names.append(a.name)
                self.col_attr.append(j)
            elif a.kind == "nominal":
                if nominal != "onehot":
                    raise ArffError(
                        f"feature attribute {a.name!r} is nominal ({len(a.values)} values); pass "
                        "nominal='onehot' to expand it into 0/1 columns",
                        self.path,
                        a.line,
                    )
                self.is_code[j] = True
                self.codes[j] = {v: k for k, v in enumerate(a.values)}
                self.onehot.append((j, len(feature_names), len(a.values)))
                for v in a.values:
                    feature_names.append(f"{a.name}={v}")
                    self.col_attr.append(j)
            else:
                raise ArffError(
                    f"feature attribute {a.name!r} has type {a.kind}, which mlsom cannot use "
                    "(only numeric and nominal features are supported)",
                    self.path,
                    a.line,
                )
        if not feature_names:
            raise ArffError("the file has no feature attribute", self.path, h.data_line)
        self.feature_names = tuple(feature_names)
        self.n_out = len(feature_names)
        self.num_in = np.asarray(out_num_in, dtype=np.intp)
        self.num_out = np.asarray(out_num_out, dtype=np.intp)
        self.number_cols = np.flatnonzero(~self.is_code)
        self.code_cols = np.flatnonzero(self.is_code)
        self.all_numeric = not self.is_code.any()

    # ---- per-block parsing ------------------------------------------------------------------

    def read_block(self, raw: list[str], first: int, missing: str) -> tuple[np.ndarray, np.ndarray]:
        """Features and labels of the data lines ``raw`` (line numbers ``first``, ...).

        On any error the block is parsed again one line at a time, so that the error reported
        is the one of the first faulty line, whatever its kind.
        """
        try:
            V, linenos = self.parse_block(raw, first)
            return self.finish(V, linenos, missing)
        except ArffError:
            pass
        for k, line in enumerate(raw):
            V, linenos = self._parse_careful([line], first + k, bulk=False)
            self.finish(V, linenos, missing)
        raise AssertionError("mlsom: an ARFF error vanished when parsing line by line")

    def parse_block(self, raw: list[str], first: int) -> tuple[np.ndarray, np.ndarray]:
        """Parse data lines ``raw`` (line numbers ``first``, ``first + 1``, ...).

        Returns ``V`` (rows x attributes; numbers, or codes of nominal features; NaN = missing)
        and the line number of each row.
        """
        if self.all_numeric:
            text = "".join(raw)
            if not any(c in text for c in _SPECIAL):
                lines = raw
                linenos = None
                if any(not s or s.isspace() for s in raw):
                    keep = [i for i, s in enumerate(raw) if s and not s.isspace()]
                    lines = [raw[i] for i in keep]
                    linenos = np.asarray(keep, dtype=np.int64) + first
                if not lines:
                    return np.empty((0, self.n_attr)), np.empty(0, dtype=np.int64)
                V = _loadtxt_numeric(lines, self.n_attr)
                if V is not None:
                    if linenos is None:
                        linenos = np.arange(first, first + len(lines), dtype=np.int64)
                    return V, linenos
        return self._parse_careful(raw, first)

    def _parse_careful(
        self, raw: list[str], first: int, bulk: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Line by line. With ``bulk`` (numeric files only), plain dense lines (no quote, ``?``,
        ``%`` or ``{``) are still parsed together by ``numpy.loadtxt``; if that fails, or any
        line is faulty, the block is parsed again without it, so that the first faulty line is
        the one reported."""
        path = self.path
        n_attr = self.n_attr
        bulk = bulk and self.all_numeric
        plain_lines: list[str] = []
        plain_pos: list[int] = []
        dense_rows: list[list[str]] = []
        dense_pos: list[int] = []
        sparse: list[tuple[int, list[tuple[int, float]]]] = []  # (row, [(attribute, value)])
        linenos: list[int] = []
        pending: ArffError | None = None
        for k, line in enumerate(raw):
            lineno = first + k
            s = line.strip()
            if not s or s[0] == "%":
                continue
            try:
                if s[0] == "{":
                    vals = [
                        (j, self._convert_one(j, tok, lineno))
                        for j, tok in self._sparse_items(s, lineno)
                    ]
                    sparse.append((len(linenos), vals))
                elif "'" in s or '"' in s or "%" in s:
                    fields = [_unquote(t, path, lineno) for t in _split_fields(s, path, lineno)]
                    if fields == [""]:  # only a trailing comment
                        continue
                    self._check_count(fields, lineno)
                    dense_pos.append(len(linenos))
                    dense_rows.append(fields)
                elif bulk and "?" not in s and "{" not in s:
                    plain_pos.append(len(linenos))
                    plain_lines.append(s)
                else:
                    fields = s.split(",")
                    self._check_count(fields, lineno)
                    dense_pos.append(len(linenos))
                    dense_rows.append(fields)
            except ArffError as exc:
                if bulk:
                    return self._parse_careful(raw, first, bulk=False)
                pending = exc
                break
            linenos.append(lineno)
        rows = np.asarray(linenos, dtype=np.int64)
        V = np.empty((len(linenos), n_attr))
        if plain_lines:
            P = _loadtxt_numeric(plain_lines, n_attr)
            if P is None:
                return self._parse_careful(raw, first, bulk=False)
            V[np.asarray(plain_pos, dtype=np.intp)] = P
        if dense_rows:
            pos = np.asarray(dense_pos, dtype=np.intp)
            V[pos] = self._convert_tokens(np.array(dense_rows, dtype=str), rows[pos])
        for r, vals in sparse:
            V[r] = self.sparse_default
            for j, v in vals:
                V[r, j] = v
        if pending is not None:
            raise pending
        return V, rows

    def _check_count(self, fields: list[str], lineno: int) -> None:
        if len(fields) == self.n_attr:
            return
        if fields and fields[-1].strip().startswith("{"):
            raise ArffError(
                "instance weights ({w} after the values) are not supported", self.path, lineno
            )
        raise ArffError(f"expected {self.n_attr} values, found {len(fields)}", self.path, lineno)

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
                raise ArffError(f"sparse entry {f!r} is not 'index value'", path, lineno)
            try:
                j = int(parts[0])
            except ValueError:
                raise ArffError(
                    f"sparse index {parts[0]!r} is not an integer", path, lineno
                ) from None
            if not 0 <= j < self.n_attr:
                raise ArffError(
                    f"sparse index {j} out of range: the file declares {self.n_attr} "
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
        if tok == "?":
            return math.nan
        if self.is_code[j]:
            code = self.codes[j].get(tok)
            if code is None:
                raise ArffError(self._bad_nominal(j, tok), self.path, lineno)
            return float(code)
        try:
            return float(tok)
        except ValueError:
            raise ArffError(self._bad_number(j, tok), self.path, lineno) from None

    def _bad_number(self, j: int, tok: str) -> str:
        a = self.header.attrs[j]
        if j in set(self.label_idx.tolist()):
            return f"label {a.name!r} has the value {tok!r}; labels must be 0 or 1"
        return f"value {tok!r} of numeric attribute {a.name!r} is not a number"

    def _bad_nominal(self, j: int, tok: str) -> str:
        a = self.header.attrs[j]
        return f"value {tok!r} is not one of the declared values of nominal attribute {a.name!r}"

    def _convert_tokens(self, T: np.ndarray, linenos: np.ndarray) -> np.ndarray:
        """Strings (rows x attributes) -> numbers/codes, vectorised per column group."""
        n = T.shape[0]
        V = np.empty((n, self.n_attr))
        if self.number_cols.size:
            S = np.char.strip(T[:, self.number_cols]) if T.size else T[:, self.number_cols]
            miss = S == "?"
            if miss.any():
                S = np.where(miss, "nan", S)
            try:
                V[:, self.number_cols] = S.astype(np.float64)
            except ValueError:
                for r in range(n):
                    for c, j in enumerate(self.number_cols):
                        try:
                            float(S[r, c])
                        except ValueError:
                            raise ArffError(
                                self._bad_number(j, str(S[r, c])), self.path, int(linenos[r])
                            ) from None
                raise  # pragma: no cover - numpy and float() disagree
        for j in self.code_cols:
            col = np.char.strip(T[:, j])
            uniq, inv = np.unique(col, return_inverse=True)
            lut = np.empty(len(uniq))
            for u, val in enumerate(uniq.tolist()):
                if val == "?":
                    lut[u] = math.nan
                    continue
                code = self.codes[j].get(val)
                if code is None:
                    r = int(np.flatnonzero(inv == u)[0])
                    raise ArffError(self._bad_nominal(j, val), self.path, int(linenos[r]))
                lut[u] = code
            V[:, j] = lut[inv.reshape(-1)]
        return V

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
                msg = f"label {name!r} is missing ('?'); labels may not be missing"
            else:
                msg = f"label {name!r} has the value {v:g}; labels must be 0 or 1"
            raise ArffError(msg, self.path, int(linenos[r]))
        if first_missing < np.inf:
            r = int(first_missing)
            c = int(np.flatnonzero(nan[r])[0])
            name = self.header.attrs[self.col_attr[c]].name
            raise ArffError(
                f"missing value ('?') of attribute {name!r}; pass missing='mean' or "
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


def _check_options(path, nominal, missing, dtype, encoding, xml=None) -> np.dtype:
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
    return dt


def _prepare(path, labels, label_location, xml, nominal, encoding) -> _Schema:
    with _open_text(path, encoding) as fh:
        try:
            with _decompressing(fh, path):
                header = _read_header(fh, path)
        except UnicodeError as exc:
            raise ArffError(f"cannot decode the header as {encoding}: {exc}", path, None) from None
    idx = _label_indices(header, labels, label_location, xml)
    return _Schema(header, idx, nominal)


def _blocks(
    schema: _Schema, encoding: str, block_lines: int, missing: str
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(X, Y) per block of data lines; X may hold NaN when missing == 'mean'."""
    path = schema.path
    with _open_text(path, encoding) as fh:
        with _decompressing(fh, path):
            for _ in islice(fh, schema.header.data_line):
                pass
        first = schema.header.data_line + 1
        while True:
            try:
                with _decompressing(fh, path, first - 1):
                    raw = list(islice(fh, block_lines))
            except UnicodeError as exc:
                # what surrogateescape cannot map (multi-byte codecs such as UTF-16): the decoder
                # reads ahead, so the faulty line is only known to come after line first - 1
                raise ArffError(
                    f"cannot decode the text after line {first - 1} as {encoding} (pass "
                    f"encoding=): {exc}",
                    path,
                    None,
                ) from None
            if not raw:
                return
            bad = None
            if _UNDECODABLE.search("".join(raw)):
                bad = next(k for k, line in enumerate(raw) if _UNDECODABLE.search(line))
            if bad != 0:  # the lines before an undecodable one come first, their errors too
                X, Y = schema.read_block(raw if bad is None else raw[:bad], first, missing)
                if X.shape[0]:
                    yield X, Y
            if bad is not None:
                raise ArffError(_undecodable(raw[bad], encoding), path, first + bad)
            first += len(raw)


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
    nan = np.isnan(X)
    if nan.any():
        X[nan] = np.broadcast_to(fill, X.shape)[nan]


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
        one 0/1 column per declared value, named ``"attribute=value"``.
    missing : {"error", "mean", "zero"}, default "error"
        Missing feature values (``?``): raise :class:`ArffError` naming the line and attribute,
        or impute the column mean of the observed values (0 for a column with no observed value),
        or 0. A missing nominal feature gives NaN in each of its one-hot columns before imputation
        (so "mean" imputes the value frequencies). Missing labels are always an error.
    dtype : floating dtype, default numpy.float64
        dtype of ``X``.
    encoding : str, default "utf-8"
        Text encoding of the file.

    Returns
    -------
    MultilabelDataset
        ``X`` (n x features, ``dtype``), ``Y`` (n x labels, uint8), names, relation, source.

    Raises
    ------
    ArffError
        (a ``ValueError``) for a malformed file: wrong number of values in a row, a non-number in
        a numeric column, a label value other than 0/1, an unknown attribute type, no ``@data``,
        a sparse index out of range, a label of the XML missing from the header, a string or date
        attribute, bytes that are not text in ``encoding``, a damaged or truncated compressed
        file, an XML file in an encoding the XML parser cannot read, ... The message names the
        file and, where one applies, the line.
    ValueError
        for invalid options (TypeError for options of the wrong type).
    FileNotFoundError
        if ``path`` or ``xml`` does not exist.

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
    not supported.
    """
    dt = _check_options(path, nominal, missing, dtype, encoding, xml)
    schema = _prepare(path, labels, label_location, xml, nominal, encoding)
    Xs: list[np.ndarray] = []
    Ys: list[np.ndarray] = []
    for X, Y in _blocks(schema, encoding, _LOAD_BLOCK_LINES, missing):
        Xs.append(X)
        Ys.append(Y)
    if Xs:
        X = np.concatenate(Xs) if len(Xs) > 1 else Xs[0]
        Y = np.concatenate(Ys) if len(Ys) > 1 else Ys[0]
    else:
        X = np.empty((0, schema.n_out))
        Y = np.empty((0, len(schema.label_names)), dtype=np.uint8)
    if missing == "mean" and np.isnan(X).any():
        acc = _ColumnMeans(schema.n_out)
        acc.add(X)
        _fill_nan(X, acc.means())
    return MultilabelDataset(
        X=np.ascontiguousarray(X, dtype=dt),
        Y=np.ascontiguousarray(Y, dtype=np.uint8),
        feature_names=schema.feature_names,
        label_names=schema.label_names,
        relation=schema.header.relation,
        source=os.fspath(path),
    )


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
        self, path, chunk_size, labels, label_location, xml, nominal, missing, dtype, encoding
    ):
        self._dtype = _check_options(path, nominal, missing, dtype, encoding, xml)
        if (
            isinstance(chunk_size, bool)
            or not isinstance(chunk_size, numbers.Integral)
            or chunk_size < 1
        ):
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        chunk_size = int(chunk_size)
        self._schema = _prepare(path, labels, label_location, xml, nominal, encoding)
        self.feature_names = self._schema.feature_names
        self.label_names = self._schema.label_names
        self.relation = self._schema.header.relation
        self.source = os.fspath(path)
        self._chunk_size = chunk_size
        self._encoding = encoding
        self._missing = missing
        self._gen = self._generate()

    def _generate(self):
        schema = self._schema
        size = self._chunk_size
        fill = None
        if self._missing == "mean":  # first pass: column means of the observed values
            acc = _ColumnMeans(schema.n_out)
            for X, _ in _blocks(schema, self._encoding, size, "mean"):
                acc.add(X)
            fill = acc.means()
        bufX: list[np.ndarray] = []
        bufY: list[np.ndarray] = []
        held = 0
        for X, Y in _blocks(schema, self._encoding, size, self._missing):
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
        return (np.ascontiguousarray(X, dtype=self._dtype), np.ascontiguousarray(Y))

    def __iter__(self):
        return self

    def __next__(self) -> tuple[np.ndarray, np.ndarray]:
        return next(self._gen)

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
    labels, label_location, xml, nominal, missing, dtype, encoding
        As in :func:`load_arff`. ``missing="mean"`` reads the file **twice**: a first pass
        computes the column means of the observed values (it also checks the whole file, so a
        malformed line raises before the first chunk), the second pass yields the imputed chunks.

    Returns
    -------
    ArffChunkIterator
        An iterator of ``(X_chunk, Y_chunk)``; its ``feature_names``, ``label_names``,
        ``relation`` and ``source`` are available before the first chunk. Header errors raise
        when ``iter_arff`` is called; errors in the data raise from ``next()`` when the faulty
        line is reached.

    Examples
    --------
    >>> for X, Y in iter_arff("yeast.arff.gz", chunk_size=500):  # doctest: +SKIP
    ...     model.partial_fit(X, Y)
    """
    return ArffChunkIterator(
        path, chunk_size, labels, label_location, xml, nominal, missing, dtype, encoding
    )
