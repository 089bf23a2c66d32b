"""Load-time benchmark of mlsom.datasets.load_arff on a generated dense numeric ARFF file.

Writes a 100,000-row file with 100 numeric features and 14 {0,1} labels (MEKA header, labels
last via ``-C -14``) into a temporary directory, plain and gzip-compressed, then times
``load_arff`` and ``iter_arff`` on both (best of ``--repeat`` runs), and ``load_arff`` on a copy
with a trailing comment on every 1,000th row, which sends every block through the careful
per-line parser instead of the bulk one (whole comment lines no longer do: the reader passes over
them); then 10,000 rows with every value quoted, and 10,000 sparse rows (the pure-Python
tokenising paths); last, a gzip of 160 MB of blank lines against the time to decompress it.

    python benchmarks/bench_arff.py [--rows 100000] [--features 100] [--labels 14] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import tempfile
import time

import numpy as np

from mlsom.datasets import ArffError, iter_arff, load_arff


def write_arff(path: str, n: int, a: int, q: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        fh.write(f"@relation 'bench: -C -{q}'\n\n")
        for j in range(a):
            fh.write(f"@attribute x{j} numeric\n")
        for j in range(q):
            fh.write(f"@attribute y{j} {{0,1}}\n")
        fh.write("\n@data\n")
        step = 10_000
        for start in range(0, n, step):
            m = min(step, n - start)
            X = rng.standard_normal((m, a))
            Y = (rng.random((m, q)) < 0.3).astype(np.int8)
            block = np.hstack([X, Y])
            fmt = ",".join(["%.6f"] * a + ["%d"] * q)
            np.savetxt(fh, block, fmt=fmt)


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--labels", type=int, default=14)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    n, a, q = args.rows, args.features, args.labels
    tmp = tempfile.mkdtemp(prefix="mlsom-bench-arff-")
    try:
        plain = os.path.join(tmp, "bench.arff")
        t = time.perf_counter()
        write_arff(plain, n, a, q)
        with open(plain, "rb") as src, gzip.open(plain + ".gz", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        print(
            f"generated {n} x ({a} features + {q} labels): "
            f"{os.path.getsize(plain) / 1e6:.1f} MB plain, "
            f"{os.path.getsize(plain + '.gz') / 1e6:.1f} MB gzip "
            f"({time.perf_counter() - t:.1f} s)"
        )
        # the same data with a trailing comment on every 1,000th row: every block takes the
        # careful per-line path instead of the bulk numpy.loadtxt path
        careful = os.path.join(tmp, "bench-comments.arff")
        with open(plain) as src, open(careful, "w") as dst:
            k = -1
            for line in src:
                if k >= 0 and k % 1000 == 0:
                    line = line.rstrip("\n") + "  % comment\n"
                dst.write(line)
                if k >= 0 or line.startswith("@data"):
                    k += 1
        d = load_arff(plain)
        assert d.X.shape == (n, a) and d.Y.shape == (n, q), (d.X.shape, d.Y.shape)
        for label, path in (("plain", plain), ("gzip ", plain + ".gz")):
            s = best_of(lambda path=path: load_arff(path), args.repeat)
            print(f"load_arff {label}: {s:6.3f} s  ({n / s:,.0f} rows/s)")
            s = best_of(lambda path=path: sum(x.shape[0] for x, _ in iter_arff(path)), args.repeat)
            print(f"iter_arff {label}: {s:6.3f} s  ({n / s:,.0f} rows/s, chunks of 10000)")
        # slow paths, on 10,000 rows: every value quoted; sparse rows with 20 of 114 entries
        m = 10_000
        quoted = os.path.join(tmp, "quoted.arff")
        sparse = os.path.join(tmp, "sparse.arff")
        with open(plain) as src, open(quoted, "w") as fq, open(sparse, "w") as fs:
            rng = np.random.default_rng(1)
            k = -1
            for line in src:
                if k < 0:
                    fq.write(line)
                    fs.write(line)
                    if line.startswith("@data"):
                        k = 0
                    continue
                if k == m:
                    break
                fq.write(",".join(f"'{v}'" for v in line.rstrip("\n").split(",")) + "\n")
                idx = np.sort(rng.choice(a + q, 20, replace=False))
                fs.write("{" + ",".join(f"{j} 1" for j in idx) + "}\n")
                k += 1
        for label, path in (("every value quoted", quoted), ("sparse rows", sparse)):
            s = best_of(lambda path=path: load_arff(path), args.repeat)
            print(f"load_arff {m} rows, {label}: {s:6.3f} s  ({m / s:,.0f} rows/s)")
        c = load_arff(careful)
        assert np.array_equal(c.X, d.X) and np.array_equal(c.Y, d.Y)
        s = best_of(lambda: load_arff(careful), args.repeat)
        print(
            f"load_arff plain, per-line path (comment every 1000 rows): {s:6.3f} s  "
            f"({n / s:,.0f} rows/s)"
        )
        # a blank-line bomb: 160 MB of newlines in 160 kB of gzip (members of 16 MB each)
        bomb = os.path.join(tmp, "blank.arff.gz")
        member = gzip.compress(b"\n" * (16 << 20), 9, mtime=0)
        with open(bomb, "wb") as fh:
            fh.write(gzip.compress(b"@relation r\n", mtime=0))
            for _ in range(10):
                fh.write(member)

        def unzip():
            with gzip.open(bomb, "rb") as fh:
                while fh.read(1 << 20):
                    pass

        def refuse():
            try:
                load_arff(bomb)
            except ArffError:
                pass

        u = best_of(unzip, args.repeat)
        s = best_of(refuse, args.repeat)
        print(
            f"load_arff 160 MB of blank lines (gzip): {s:6.3f} s, decompressing them {u:6.3f} s "
            f"({s / u:.1f}x)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
