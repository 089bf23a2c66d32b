"""Tests of mlsom.datasets.load_arff / iter_arff: real files in tests/data and edge cases."""

import bz2
import gzip
import io
import lzma
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.io import arff as scipy_arff

from mlsom.datasets import ArffError, MultilabelDataset, iter_arff, load_arff
from tests.helpers.arff_files import raises_at, write
from tests.helpers.paths import DATA


def data(name: str) -> Path:
    """A file of tests/data; a missing file fails the test (it is never skipped)."""
    path = DATA / name
    assert path.is_file(), f"test data file {path} is missing (see tests/data/README.md)"
    return path


# ---------------------------------------------------------------------------------------------
# real data sets (values from tests/data/README.md)

YEAST_LABELS = tuple(f"Class{i}" for i in range(1, 15))
SCENE_LABELS = ("Beach", "Sunset", "FallFoliage", "Field", "Mountain", "Urban")
EMOTIONS_LABELS = (
    "amazed-suprised",
    "happy-pleased",
    "relaxing-calm",
    "quiet-still",
    "sad-lonely",
    "angry-aggresive",
)


def test_yeast_mulan_counts_and_header_order():
    d = load_arff(data("yeast.arff.gz"))
    assert isinstance(d, MultilabelDataset)
    assert d.X.shape == (2417, 103) and d.Y.shape == (2417, 14)
    assert d.X.dtype == np.float64 and d.Y.dtype == np.uint8
    assert d.feature_names == tuple(f"Att{i}" for i in range(1, 104))
    # yeast.xml lists Class1, Class2, Class3, Class6, Class4, ...: the header order wins
    assert d.label_names == YEAST_LABELS
    assert round(d.cardinality, 4) == 4.2371
    assert round(d.density, 4) == 0.3026
    assert len({tuple(r) for r in d.Y}) == 198
    assert d.relation == "MultiLabelData"
    assert d.source.endswith("yeast.arff.gz")
    # Class14 has 1.4 % positives (protocol.md, section 0)
    assert round(d.Y[:, 13].mean(), 3) == 0.014


def test_yeast_labels_matched_by_name_not_by_xml_position():
    auto = load_arff(data("yeast.arff.gz"))
    explicit = load_arff(data("yeast.arff.gz"), xml=data("yeast.xml"))
    by_names = load_arff(data("yeast.arff.gz"), labels=list(reversed(YEAST_LABELS)))
    last = load_arff(data("yeast.arff.gz"), label_location=("last", 14))
    for other in (explicit, by_names, last):
        np.testing.assert_array_equal(other.X, auto.X)
        np.testing.assert_array_equal(other.Y, auto.Y)
        assert other.label_names == YEAST_LABELS
    # column k of Y is the attribute Class{k+1}: check against the raw text of the first row
    with gzip.open(data("yeast.arff.gz"), "rt") as fh:
        lines = fh.read().splitlines()
    first = lines[lines.index("@data") + 1].split(",")
    assert [int(v) for v in first[103:]] == auto.Y[0].tolist()
    np.testing.assert_array_equal([float(v) for v in first[:103]], auto.X[0])


def test_scene_train_test_counts():
    tr = load_arff(data("scene-train.arff.gz"))  # finds scene.xml for scene-train
    te = load_arff(data("scene-test.arff.gz"))
    assert tr.X.shape == (1211, 294) and te.X.shape == (1196, 294)
    assert tr.label_names == te.label_names == SCENE_LABELS
    assert round(tr.cardinality, 4) == 1.0619 and round(te.cardinality, 4) == 1.0861
    Y = np.vstack([tr.Y, te.Y])
    assert Y.shape == (2407, 6)
    assert round(Y.sum(axis=1).mean(), 4) == 1.0740
    assert len({tuple(r) for r in Y}) == 15


def test_emotions_counts():
    d = load_arff(data("emotions.arff"))
    assert d.X.shape == (593, 72) and d.Y.shape == (593, 6)
    assert d.label_names == EMOTIONS_LABELS
    assert round(d.cardinality, 4) == 1.8685
    assert len({tuple(r) for r in d.Y}) == 27
    assert d.Y.sum(axis=1).min() >= 1


def test_meka_music_labels_first():
    d = load_arff(data("meka/Music.arff"))  # line 1 is a comment; relation 'Music: -C 6'
    assert d.relation == "Music: -C 6"
    assert d.X.shape == (592, 71) and d.Y.shape == (592, 6)
    assert d.label_names[2] == "relaxing-clam"
    assert d.label_names == tuple(n.replace("calm", "clam") for n in EMOTIONS_LABELS)
    assert "BH_HighLowRatio" not in d.feature_names
    assert round(d.cardinality, 4) == 1.8699
    # labels first: the same as naming them
    same = load_arff(data("meka/Music.arff"), label_location=("first", 6))
    np.testing.assert_array_equal(same.X, d.X)
    np.testing.assert_array_equal(same.Y, d.Y)


def test_meka_and_mulan_yeast_agree():
    mulan = load_arff(data("yeast.arff.gz"))
    meka = load_arff(data("meka/Yeast.arff.gz"))
    assert meka.relation == "Yeast: -C 14 -split-number 1500"
    assert meka.label_names == mulan.label_names
    assert meka.feature_names == mulan.feature_names
    # Mulan's yeast.arff is test (917) then train (1500); MEKA's file is train then test
    np.testing.assert_array_equal(meka.X[:1500], mulan.X[917:])
    np.testing.assert_array_equal(meka.X[1500:], mulan.X[:917])
    np.testing.assert_array_equal(meka.Y[:1500], mulan.Y[917:])
    np.testing.assert_array_equal(meka.Y[1500:], mulan.Y[:917])


def test_mulan_file_rewritten_in_meka_format_agrees(tmp_path):
    """emotions.arff with its relation changed to MEKA's '-C -6' (labels last)."""
    text = data("emotions.arff").read_text()
    assert text.startswith("@relation musicout\n")
    path = write(tmp_path, text.replace("@relation musicout", "@relation 'emotions: -C -6'", 1))
    meka = load_arff(path)  # no XML in tmp_path: labels come from -C
    mulan = load_arff(data("emotions.arff"))
    np.testing.assert_array_equal(meka.X, mulan.X)
    np.testing.assert_array_equal(meka.Y, mulan.Y)
    assert meka.label_names == mulan.label_names


def test_meka_labels_first_rewritten_from_mulan(tmp_path):
    """yeast written with its labels moved first and '-C 14' agrees with the Mulan file."""
    d = load_arff(data("yeast.arff.gz"))
    out = io.StringIO()
    out.write("@relation 'yeast: -C 14'\n")
    for n in d.label_names:
        out.write(f"@attribute {n} {{0,1}}\n")
    for n in d.feature_names:
        out.write(f"@attribute {n} numeric\n")
    out.write("@data\n")
    with gzip.open(data("yeast.arff.gz"), "rt") as fh:
        lines = fh.read().splitlines()
    for row in lines[lines.index("@data") + 1 :]:
        v = row.split(",")
        out.write(",".join(v[103:] + v[:103]) + "\n")
    meka = load_arff(write(tmp_path, out.getvalue()))
    np.testing.assert_array_equal(meka.X, d.X)
    np.testing.assert_array_equal(meka.Y, d.Y)
    assert meka.label_names == d.label_names


def test_minas_br_meka_stream():
    tr = load_arff(data("minas-br/4CRE-V2-train.arff.gz"))
    te = load_arff(data("minas-br/4CRE-V2-test.arff.gz"))
    assert tr.label_names == te.label_names == ("class0", "class1", "class2", "class3")
    assert tr.feature_names == ("att0", "att1")
    assert tr.X.shape == (14600, 2) and te.X.shape == (130900, 2)
    # the novel classes class0/class1 never occur in the training part
    assert tr.Y[:, :2].sum() == 0 and te.Y[:, :2].sum() > 0


@pytest.mark.parametrize("name", ["emotions.arff", "yeast.arff.gz"])
def test_agrees_with_scipy_loadarff(name):
    path = data(name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as fh:
        rec, meta = scipy_arff.loadarff(fh)
    d = load_arff(path)
    names = meta.names()
    assert len(rec) == d.n_instances
    assert tuple(n for n in names if meta[n][0] == "numeric") == d.feature_names
    assert tuple(n for n in names if meta[n][0] == "nominal") == d.label_names
    X = np.column_stack([rec[n] for n in d.feature_names])
    Y = np.column_stack([rec[n].astype(int) for n in d.label_names])
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.Y, Y)


# ---------------------------------------------------------------------------------------------
# compression


def test_compressed_and_plain_agree(tmp_path):
    raw = data("emotions.arff").read_bytes()
    shutil.copy(data("emotions.xml"), tmp_path / "emotions.xml")
    ref = load_arff(data("emotions.arff"))
    files = {
        "emotions.arff.gz": gzip.compress(raw),
        "emotions.arff.bz2": bz2.compress(raw),
        "emotions.arff.xz": lzma.compress(raw),
        "emotions.arff": raw,
    }
    for fname, blob in files.items():
        (tmp_path / fname).write_bytes(blob)
        d = load_arff(tmp_path / fname)  # companion XML found for every suffix
        np.testing.assert_array_equal(d.X, ref.X)
        np.testing.assert_array_equal(d.Y, ref.Y)
        assert d.label_names == EMOTIONS_LABELS


def test_compression_recognised_by_magic_bytes(tmp_path):
    """A gzip file without a .gz suffix and an uncompressed file named .gz both load."""
    plain = gzip.decompress(data("yeast.arff.gz").read_bytes())
    (tmp_path / "a.arff").write_bytes(data("yeast.arff.gz").read_bytes())  # gzip inside
    (tmp_path / "b.arff.gz").write_bytes(plain)  # plain text inside
    ref = load_arff(data("yeast.arff.gz"))
    for name in ("a.arff", "b.arff.gz"):
        d = load_arff(tmp_path / name, xml=data("yeast.xml"))
        np.testing.assert_array_equal(d.X, ref.X)
        np.testing.assert_array_equal(d.Y, ref.Y)


# ---------------------------------------------------------------------------------------------
# syntax: quotes, comments, blank lines, case, sparse rows

QUOTED = """\
% a comment before the relation
@RELATION 'birds: \\'quoted\\' relation'   % trailing comment

@ATTRIBUTE "a 1" NUMERIC
@Attribute b Real
@attribute c INTEGER
@attribute 'Swainson\\'s Thrush' {0,1}
@attribute "say \\"hi\\"" { 0 , 1 }
% comment between attributes

@DATA
% comment in the data
1.5, 2, 3, 1, 0

'4',"5",6,'1',"0"   % trailing comment
  7 ,8 , 9 , 0 , 1
"""


def test_quotes_escapes_comments_blank_lines_case(tmp_path):
    path = write(tmp_path, QUOTED)
    d = load_arff(path, label_location=("last", 2))
    assert d.relation == "birds: 'quoted' relation"
    assert d.feature_names == ("a 1", "b", "c")
    assert d.label_names == ("Swainson's Thrush", 'say "hi"')
    np.testing.assert_array_equal(d.X, [[1.5, 2, 3], [4, 5, 6], [7, 8, 9]])
    np.testing.assert_array_equal(d.Y, [[1, 0], [1, 0], [0, 1]])
    by_name = load_arff(path, labels=["Swainson's Thrush", 'say "hi"'])
    np.testing.assert_array_equal(by_name.Y, d.Y)


def test_crlf_line_endings_and_bom(tmp_path):
    text = "\ufeff" + QUOTED.replace("\n", "\r\n")
    path = tmp_path / "crlf.arff"
    path.write_bytes(text.encode("utf-8"))
    d = load_arff(path, label_location=("last", 2))
    np.testing.assert_array_equal(d.X, [[1.5, 2, 3], [4, 5, 6], [7, 8, 9]])


def test_xml_label_with_escaped_quote(tmp_path):
    path = write(tmp_path, QUOTED, "birds.arff")
    (tmp_path / "birds.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<labels xmlns="http://mulan.sourceforge.net/labels">\n'
        '<label name="say &quot;hi&quot;"></label>\n'
        '<label name="Swainson\'s Thrush"></label>\n'
        "</labels>\n"
    )
    d = load_arff(path)
    assert d.label_names == ("Swainson's Thrush", 'say "hi"')  # header order, not XML order
    np.testing.assert_array_equal(d.Y, [[1, 0], [1, 0], [0, 1]])


def _dense_and_sparse(rng, n=300, a=12, q=4, zero_rate=0.7):
    X = np.round(rng.standard_normal((n, a)), 4)
    X[rng.random((n, a)) < zero_rate] = 0.0
    Y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    header = [f"@relation 'syn: -C -{q}'"]
    header += [f"@attribute x{j} numeric" for j in range(a)]
    header += [f"@attribute y{j} {{0,1}}" for j in range(q)]
    header.append("@data")
    dense, sparse = list(header), list(header)
    for x, y in zip(X, Y, strict=True):
        vals = [repr(float(v)) for v in x] + [str(int(v)) for v in y]
        dense.append(",".join(vals))
        items = [f"{j} {v}" for j, v in enumerate(vals) if float(v) != 0]
        sparse.append("{" + ", ".join(items) + "}")
    return X, Y, "\n".join(dense) + "\n", "\n".join(sparse) + "\n"


def test_sparse_and_dense_agree(tmp_path):
    rng = np.random.default_rng(1)
    X, Y, dense, sparse = _dense_and_sparse(rng)
    data_lines = sparse.splitlines()[sparse.splitlines().index("@data") + 1 :]
    assert len(data_lines) == 300 and all(r.startswith("{") for r in data_lines)
    assert len(sparse) < 0.7 * len(dense)
    d = load_arff(write(tmp_path, dense, "d.arff"))
    s = load_arff(write(tmp_path, sparse, "s.arff"))
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.Y, Y)
    np.testing.assert_array_equal(s.X, X)
    np.testing.assert_array_equal(s.Y, Y)
    # rows of both kinds mixed in one file, in a random order of entries
    lines = sparse.splitlines()
    start = lines.index("@data") + 1
    dlines = dense.splitlines()
    mixed = lines[:start]
    for k in range(start, len(lines)):
        mixed.append(dlines[k] if k % 2 else lines[k])
    m = load_arff(write(tmp_path, "\n".join(mixed) + "\n", "m.arff"))
    np.testing.assert_array_equal(m.X, X)
    np.testing.assert_array_equal(m.Y, Y)


def test_sparse_row_details(tmp_path):
    text = """\
@relation s
@attribute x numeric
@attribute col {red,green}
@attribute z numeric
@attribute y {1,0}
@data
{}
{2 -1.5, 0 2}
{ 1 green , 3 0 }
{0 ?}
"""
    d = load_arff(write(tmp_path, text), labels=["y"], nominal="onehot", missing="zero")
    # omitted values are 0, i.e. the first declared value of a nominal attribute (Weka)
    np.testing.assert_array_equal(d.X, [[0, 1, 0, 0], [2, 1, 0, -1.5], [0, 0, 1, 0], [0, 1, 0, 0]])
    # y is declared {1,0}: an omitted y is its first value, "1"
    np.testing.assert_array_equal(d.Y, [[1], [1], [0], [1]])


def test_whitespace_only_and_comment_lines_in_fast_path(tmp_path):
    text = "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,0\n\n   \n2,1\n"
    d = load_arff(write(tmp_path, text), labels=["y"])
    np.testing.assert_array_equal(d.X, [[1], [2]])
    np.testing.assert_array_equal(d.Y, [[0], [1]])


def test_empty_data_section(tmp_path):
    d = load_arff(
        write(tmp_path, "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n"),
        labels=["y"],
    )
    assert d.X.shape == (0, 1) and d.Y.shape == (0, 1)


# ---------------------------------------------------------------------------------------------
# nominal features, string/date attributes, missing values

NOMINAL = """\
@relation n
@attribute size numeric
@attribute color {red, 'dark blue', "x,y"}
@attribute y {0,1}
@data
1, red, 1
2, 'dark blue', 0
3, "x,y", 1
4, red, 0
"""


def test_nominal_feature_onehot(tmp_path):
    path = write(tmp_path, NOMINAL)
    d = load_arff(path, labels=["y"], nominal="onehot")
    assert d.feature_names == ("size", "color=red", "color=dark blue", "color=x,y")
    np.testing.assert_array_equal(d.X, [[1, 1, 0, 0], [2, 0, 1, 0], [3, 0, 0, 1], [4, 1, 0, 0]])
    np.testing.assert_array_equal(d.Y.ravel(), [1, 0, 1, 0])


def test_quoted_nominal_values_with_percent_backslash_and_comma(tmp_path):
    text = r"""@relation n
@attribute v {'50%', 'a\\b', "c,d", 'it\'s'}
@attribute y {0,1}
@data
'50%',1 % the quoted % is not a comment
'a\\b' , 0
"c,d",1
'it\'s',0
"""
    d = load_arff(write(tmp_path, text), labels=["y"], nominal="onehot")
    assert d.feature_names == ("v=50%", "v=a\\b", "v=c,d", "v=it's")
    np.testing.assert_array_equal(d.X, np.eye(4))
    np.testing.assert_array_equal(d.Y.ravel(), [1, 0, 1, 0])


def test_nominal_feature_error_names_attribute(tmp_path):
    path = write(tmp_path, NOMINAL)
    with raises_at(3, "'color' is nominal.*nominal='onehot'"):
        load_arff(path, labels=["y"])


def test_nominal_value_not_declared(tmp_path):
    path = write(tmp_path, NOMINAL.replace("4, red, 0", "4, blue, 0"))
    with raises_at(9, "'blue'.*'color'"):
        load_arff(path, labels=["y"], nominal="onehot")


@pytest.mark.parametrize(
    "decl, kind",
    [("string", "string"), ("DATE 'yyyy-MM-dd'", "date"), ("relational", "relational")],
)
def test_string_date_relational_features_refused(tmp_path, decl, kind):
    text = f"@relation r\n@attribute a numeric\n@attribute s {decl}\n@attribute y {{0,1}}\n@data\n"
    with raises_at(3, f"'s' has type {kind}"):
        load_arff(write(tmp_path, text), labels=["y"])


MISSING = """\
@relation m
@attribute a numeric
@attribute b numeric
@attribute c {u,v}
@attribute y {0,1}
@data
1,10,u,1
?,20,v,0
3,?,?,1
{0 5, 1 ?, 3 1}
"""


def test_missing_value_is_an_error_naming_line_and_attribute(tmp_path):
    path = write(tmp_path, MISSING)
    with raises_at(8, "missing value.*'a'.*missing='mean'"):
        load_arff(path, labels=["y"], nominal="onehot")


def test_missing_value_imputation(tmp_path):
    path = write(tmp_path, MISSING)
    zero = load_arff(path, labels=["y"], nominal="onehot", missing="zero")
    np.testing.assert_array_equal(
        zero.X, [[1, 10, 1, 0], [0, 20, 0, 1], [3, 0, 0, 0], [5, 0, 1, 0]]
    )
    mean = load_arff(path, labels=["y"], nominal="onehot", missing="mean")
    a_mean = (1 + 3 + 5) / 3
    b_mean = (10 + 20) / 2
    c_u, c_v = 2 / 3, 1 / 3  # observed c: u, v, u (the sparse row omits c: its first value u)
    np.testing.assert_allclose(
        mean.X,
        [[1, 10, 1, 0], [a_mean, 20, 0, 1], [3, b_mean, c_u, c_v], [5, b_mean, 1, 0]],
    )
    np.testing.assert_array_equal(mean.Y.ravel(), [1, 0, 1, 1])


def test_missing_label_is_always_an_error(tmp_path):
    text = "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n2,?\n"
    for missing in ("error", "mean", "zero"):
        with raises_at(6, "label 'y' is missing"):
            load_arff(write(tmp_path, text), labels=["y"], missing=missing)


# ---------------------------------------------------------------------------------------------
# malformed files: ArffError naming the file and the line

BASE = """\
@relation t
@attribute a numeric
@attribute b numeric
@attribute y1 {0,1}
@attribute y2 {0,1}
@data
"""  # data starts on line 7


@pytest.mark.parametrize(
    "data_text, line, match",
    [
        ("1,2,0,1\n1,2,0\n", 8, "expected 4 values, found 3"),
        ("1,2,0,1,5\n", 7, "expected 4 values, found 5"),
        ("1,2,0,1\n1,2,0,1,\n", 8, "expected 4 values, found 5"),
        ("1,2,0,1\n1,abc,0,1\n", 8, "'abc' of numeric attribute 'b' is not a number"),
        ("1,2,0,1\n1,2,2,1\n", 8, "label 'y1' has the value 2"),
        ("1,2,0,1\n1,2,0,yes\n", 8, "label 'y2' has the value 'yes'"),
        ("1,2,0,1\n\n\n1,2,1,-1\n", 10, "label 'y2' has the value -1"),
        ("1,2,0,1\n{0 1, 4 1}\n", 8, "sparse index 4 out of range"),
        ("1,2,0,1\n{0 1, x 1}\n", 8, "sparse index 'x' is not an integer"),
        ("1,2,0,1\n{0 1, 2 1\n", 8, "without closing"),
        ("1,2,0,1\n{0 1, 0 2}\n", 8, "appears twice"),
        ("1,2,0,1\n{0 1, 2}\n", 8, "not 'index value'"),
        ("1,'2,0,1\n", 7, "unterminated ' quote"),
        ("1,'2'3,0,1\n", 7, "text after the closing quote"),
        ('1,"2\\",0,1\n', 7, 'unterminated " quote'),
        ("1,2,0,1,{0.5}\n", 7, "instance weights"),
        ("1,2,0,1\n% c\n1,2,0,1\n1,2,0,3\n", 10, "label 'y2' has the value 3"),
        ("1,2,0,1\n?,2,0,1\n", 8, "missing value.*'a'"),
        # the first faulty line is reported, whatever the kinds of the faults
        ("1,2,0,1\n{0 1, 1 x}\n1,2,0,5\n", 8, "'x' of numeric attribute 'b'"),
        ("1,2,0,5\n{0 1, 1 x}\n", 7, "label 'y2' has the value 5"),
        ("1,2,0,1\n1,2,?,1\n1,2\n", 8, "label 'y1' is missing"),
        ("1,?,0,1\n1,2,0,'z'\n", 7, "missing value.*'b'"),
        ("1,2,0,1\n1,2,0,1\n1,x,0,1\n{9 1}\n", 9, "'x'"),
    ],
)
def test_malformed_rows(tmp_path, data_text, line, match):
    path = write(tmp_path, BASE + data_text)
    with pytest.raises(ArffError) as info:
        load_arff(path, labels=["y1", "y2"])
    assert re.search(match, str(info.value)), str(info.value)
    assert str(info.value).startswith(f"{path}, line {line}: ")
    assert info.value.line == line and info.value.path == str(path)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "header, line, match",
    [
        ("@relation t\n@attribute a bogus\n@attribute y {0,1}\n@data\n", 2, "unknown type 'bogus'"),
        ("@relation t\n@attribute a numeric\n@attribute y {0,1}\n", 3, "no @data"),
        ("@relation t\n\n@attribute a numeric\n@attribute y {0,1}\n\n% end\n", 6, "no @data"),
        ("@relation t\n@attribute a numeric\n@attribute a numeric\n@data\n", 3, "declared twice"),
        ("@relation t\n@attrib a numeric\n@data\n", 2, "unknown keyword '@attrib'"),
        ("@relation t\nhello\n@data\n", 2, "unexpected text"),
        ("@relation t\n@attribute {0,1}\n@data\n", 2, "missing name"),
        ("@relation t\n@attribute a numeric\n@attribute y {0,1\n@data\n", 3, "closing"),
        ("@relation t\n@attribute a numeric\n@attribute y {}\n@data\n", 3, "empty value list"),
        (
            "@relation t\n@attribute a numeric\n@attribute y {yes,no}\n@data\n",
            3,
            "label attribute 'y' must be nominal",
        ),
        (
            "@relation t\n@attribute a numeric\n@attribute y string\n@data\n",
            3,
            "label attribute 'y' has type string",
        ),
        ("@relation t\n@attribute 'a numeric\n@data\n", 2, "unterminated"),
        ("@relation t\n@data\n", 2, "@data before any @attribute"),
        ("@attribute a numeric\n@attribute y {0,1}\n@data\n", 3, "no @relation"),
    ],
)
def test_malformed_headers(tmp_path, header, line, match):
    path = write(tmp_path, header)
    with raises_at(line, match):
        load_arff(path, labels=["y"])


def test_error_line_numbers_beyond_the_first_block(tmp_path):
    """Line numbers stay right across the blocks of the bulk parser (20,000 lines each)."""
    rng = np.random.default_rng(0)
    rows = [
        f"{v:.5f},{int(y)}"
        for v, y in zip(rng.random(45_000), rng.random(45_000) < 0.5, strict=True)
    ]
    header = "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n"
    for k, bad, match in [
        (23_456, "0.5,7", "value 7"),
        (41_000, "0.5,1,1", "found 3"),
        (30_001, "x,1", "'x'"),
    ]:
        r = list(rows)
        r[k] = bad
        path = write(tmp_path, header + "\n".join(r) + "\n")
        with raises_at(4 + k + 1, match):
            load_arff(path, labels=["y"])
        with raises_at(4 + k + 1, match):
            for _ in iter_arff(path, chunk_size=1000, labels=["y"]):
                pass


def test_xml_label_absent_from_header(tmp_path):
    path = write(tmp_path, BASE + "1,2,0,1\n", "t.arff")
    xml = tmp_path / "t.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<labels xmlns="http://mulan.sourceforge.net/labels">\n'
        '<label name="y1"></label>\n'
        '<label name="Y2"></label>\n'
        "</labels>\n"
    )
    with pytest.raises(
        ArffError,
        match=rf"^{re.escape(str(xml))}, line 4: label 'Y2' is not an "
        rf"attribute of {re.escape(str(path))}",
    ):
        load_arff(path)
    xml.write_text("<labels><label name='y1'></labels>\n")
    with pytest.raises(ArffError, match=r"t\.xml, line 1: invalid XML"):
        load_arff(path)


def test_no_label_information(tmp_path):
    path = write(tmp_path, BASE + "1,2,0,1\n")
    with pytest.raises(ArffError, match=r"cannot tell which attributes are labels.*xml="):
        load_arff(path)


def test_meka_negative_and_invalid_counts(tmp_path):
    meka = BASE.replace("@relation t", "@relation 't: -C -2 -other 3'")
    path = write(tmp_path, meka + "1,2,0,1\n")
    d = load_arff(path)
    assert d.label_names == ("y1", "y2") and d.feature_names == ("a", "b")
    zero = BASE.replace("@relation t", "@relation 't: -C 0'")
    bad = write(tmp_path, zero + "1,2,0,1\n", "b.arff")
    with raises_at(1, "-C 0"):
        load_arff(bad)


def test_numeric_labels(tmp_path):
    text = "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,0\n2,1.0\n3,0.5\n"
    with raises_at(7, "label 'y' has the value 0.5"):
        load_arff(write(tmp_path, text), labels=["y"])
    d = load_arff(write(tmp_path, text.replace("3,0.5\n", "")), labels=["y"])
    np.testing.assert_array_equal(d.Y.ravel(), [0, 1])


def test_option_validation(tmp_path):
    path = write(tmp_path, BASE + "1,2,0,1\n")
    with pytest.raises(ValueError, match="nominal must be"):
        load_arff(path, labels=["y1"], nominal="ignore")
    with pytest.raises(ValueError, match="missing must be"):
        load_arff(path, labels=["y1"], missing="median")
    with pytest.raises(ValueError, match="floating-point"):
        load_arff(path, labels=["y1"], dtype=np.int64)
    with pytest.raises(ValueError, match="at most one"):
        load_arff(path, labels=["y1"], label_location=("last", 1))
    with pytest.raises(ValueError, match="label_location"):
        load_arff(path, label_location=("middle", 1))
    with pytest.raises(ArffError, match="no attribute named 'zz'"):
        load_arff(path, labels=["zz"])
    f32 = load_arff(path, label_location=("last", 2), dtype=np.float32)
    assert f32.X.dtype == np.float32
    with pytest.raises(ValueError, match="chunk_size"):
        iter_arff(path, 0, labels=["y1"])


# ---------------------------------------------------------------------------------------------
# iter_arff


@pytest.mark.parametrize("chunk_size", [1, 100, 2417, 5000])
def test_iter_equals_load_on_yeast(chunk_size):
    path = data("yeast.arff.gz")
    whole = load_arff(path)
    it = iter_arff(path, chunk_size)
    assert it.label_names == whole.label_names and it.feature_names == whole.feature_names
    chunks = list(it)
    sizes = [x.shape[0] for x, _ in chunks]
    assert all(s == chunk_size for s in sizes[:-1]) and 0 < sizes[-1] <= chunk_size
    assert sum(sizes) == 2417
    np.testing.assert_array_equal(np.vstack([x for x, _ in chunks]), whole.X)
    np.testing.assert_array_equal(np.vstack([y for _, y in chunks]), whole.Y)
    assert chunks[0][1].dtype == np.uint8


def test_iter_equals_load_with_sparse_comments_missing_mean(tmp_path):
    rng = np.random.default_rng(3)
    X, Y, dense, sparse = _dense_and_sparse(rng, n=257)
    d_lines, s_lines = dense.splitlines(), sparse.splitlines()
    start = d_lines.index("@data") + 1
    body = d_lines[:start]
    expected = X.copy()
    hole = np.zeros(X.shape, dtype=bool)
    for r, k in enumerate(range(start, len(d_lines))):
        line = s_lines[k] if r % 3 == 0 else d_lines[k]
        if r % 3 and r % 10 == 4:  # a missing x0 in some dense rows
            line = "?," + line.split(",", 1)[1]
            hole[r, 0] = True
        body.append(line)
        if r % 5 == 0:
            body.append("% comment")
        if r % 11 == 0:
            body.append("")
    assert hole.sum() > 10
    expected[hole] = X[~hole[:, 0], 0].mean()
    path = write(tmp_path, "\n".join(body) + "\n")
    whole = load_arff(path, missing="mean")
    np.testing.assert_allclose(whole.X, expected, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(whole.Y, Y)
    parts = list(iter_arff(path, 10, missing="mean"))
    assert [p[0].shape[0] for p in parts] == [10] * 25 + [7]
    np.testing.assert_array_equal(np.vstack([p[0] for p in parts]), whole.X)
    np.testing.assert_array_equal(np.vstack([p[1] for p in parts]), whole.Y)
    # header: lines 1-18; row 0 on line 19, then a comment (20) and a blank line (21); rows 1-3
    # on lines 22-24; row 4, the first with a hole, on line 25
    with raises_at(25, "missing value.*'x0'"):
        list(iter_arff(path, 10))
    with raises_at(25, "missing value.*'x0'"):
        load_arff(path)


def test_iter_is_lazy_and_header_errors_are_eager(tmp_path):
    rows = "\n".join(f"{k},{k % 2}" for k in range(100))
    path = write(
        tmp_path,
        "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n" + rows + "\n5,9\n",
    )
    it = iter_arff(path, 10, labels=["y"])
    X, Y = next(it)  # the error on the last line is not reached yet
    np.testing.assert_array_equal(X.ravel(), np.arange(10))
    with raises_at(105, "value 9"):
        list(it)
    with raises_at(1, "-C 0"):
        iter_arff(write(tmp_path, "@relation 'r: -C 0'\n@attribute a numeric\n@data\n", "h.arff"))
    with iter_arff(path, 10, labels=["y"]) as it2:
        next(it2)
    with pytest.raises(StopIteration):
        next(it2)


def test_careful_path_equals_bulk_path_on_real_data(tmp_path):
    """Comments in the data force the per-line parser; it must give the bulk parser's numbers."""
    with gzip.open(data("yeast.arff.gz"), "rt") as fh:
        lines = fh.read().splitlines()
    start = lines.index("@data") + 1
    out = lines[:start]
    for k, line in enumerate(lines[start:]):
        out.append(line if k % 3 else f"{line}  % row {k}")
    path = write(tmp_path, "\n".join(out) + "\n", "yeast.arff")
    slow = load_arff(path, xml=data("yeast.xml"))
    fast = load_arff(data("yeast.arff.gz"))
    np.testing.assert_array_equal(slow.X, fast.X)
    np.testing.assert_array_equal(slow.Y, fast.Y)


def test_encoding(tmp_path):
    text = "@relation r\n@attribute 'caf\u00e9' numeric\n@attribute y {0,1}\n@data\n1,0\n"
    path = tmp_path / "latin.arff"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ArffError, match="cannot decode"):
        load_arff(path, labels=["y"])
    d = load_arff(path, labels=["y"], encoding="latin-1")
    assert d.feature_names == ("caf\u00e9",)
