"""Build the compiled core of mlsom.

Everything else (metadata, dependencies, tool settings) lives in pyproject.toml. This file only
declares the Cython extension and chooses compiler flags:

* OpenMP is optional. It is detected per compiler by building a tiny test program; when that fails
  (for instance Apple clang without libomp) the extension is built serially and says so at run time
  (``mlsom.show_config()``). Set ``MLSOM_NO_OPENMP=1`` to build without it on purpose.
* macOS: Apple clang has no OpenMP runtime of its own. A source build finds Homebrew's ``libomp``
  (``brew install libomp``) under ``/opt/homebrew`` or ``/usr/local``, or any libomp that
  ``CFLAGS`` and ``LDFLAGS`` point to; GCC and LLVM clang use their own ``-fopenmp``. The macOS
  wheels are built without OpenMP (see ``[tool.cibuildwheel.macos]`` in pyproject.toml).
* ``MLSOM_DEBUG=1`` turns Cython's bounds checking and wrap-around checks back on, for a debug build
  that the test suite can run against.
* ``MLSOM_SANITIZE=1`` (GCC or clang) builds with AddressSanitizer and UndefinedBehaviorSanitizer,
  any undefined behaviour fatal; ``.ci/sanitize.sh`` builds that way and runs the core tests with
  the sanitizer runtimes preloaded (Python itself is not instrumented).
"""

import glob
import os
import sys
import tempfile
import textwrap

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("MLSOM_DEBUG", "0") not in ("", "0")
NO_OPENMP = os.environ.get("MLSOM_NO_OPENMP", "0") not in ("", "0")
SANITIZE = os.environ.get("MLSOM_SANITIZE", "0") not in ("", "0")
SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]

OPENMP_TEST = textwrap.dedent(
    """
    #include <omp.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        return n > 0 ? 0 : 1;
    }
    """
)


# Where Homebrew keeps the keg-only libomp on Apple silicon and on Intel Macs.
LIBOMP_PREFIXES = ("/opt/homebrew/opt/libomp", "/usr/local/opt/libomp")


def _openmp_candidates(compiler_type):
    """Return the (compile_args, link_args) pairs to try, in order, to enable OpenMP."""
    if compiler_type == "msvc":
        return [(["/openmp"], [])]
    if sys.platform != "darwin":
        return [(["-fopenmp"], ["-fopenmp"])]
    # GCC or LLVM clang first; then Apple clang, which needs -Xpreprocessor and the libomp runtime.
    candidates = [(["-fopenmp"], ["-fopenmp"])]
    for prefix in LIBOMP_PREFIXES:
        if os.path.isdir(os.path.join(prefix, "include")):
            lib = os.path.join(prefix, "lib")
            candidates.append(
                (
                    ["-Xpreprocessor", "-fopenmp", "-I" + os.path.join(prefix, "include")],
                    ["-L" + lib, "-lomp", "-Wl,-rpath," + lib],
                )
            )
    candidates.append((["-Xpreprocessor", "-fopenmp"], ["-lomp"]))
    return candidates


def _can_build_openmp(compiler, compile_args, link_args):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp_test.c")
        with open(src, "w") as f:
            f.write(OPENMP_TEST)
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=compile_args)
            compiler.link_executable(objs, "omp_test", output_dir=tmp, extra_postargs=link_args)
        except Exception:  # any compile or link failure means: no usable OpenMP
            return False
    return True


class BuildExt(build_ext):
    def build_extensions(self):
        ctype = self.compiler.compiler_type
        if ctype == "msvc":
            base = ["/O2"]
        else:
            # -ffp-contract=off: no fused multiply-add, so the SIMD paths chosen at run time and the
            # plain C path give bitwise identical distances.
            base = ["-O3", "-ffp-contract=off", "-fno-math-errno"]
        sanitize_link = []
        if SANITIZE:
            if ctype == "msvc":
                raise SystemExit("mlsom: MLSOM_SANITIZE needs GCC or clang")
            print(f"mlsom: building with {' '.join(SANITIZERS)} (MLSOM_SANITIZE is set)")
            base = ["-O1", "-g", "-fno-omit-frame-pointer", "-ffp-contract=off", *SANITIZERS]
            sanitize_link = SANITIZERS
        omp_compile, omp_link = [], []
        if NO_OPENMP:
            print("mlsom: building without OpenMP (MLSOM_NO_OPENMP is set)")
        else:
            for omp_compile, omp_link in _openmp_candidates(ctype):
                if _can_build_openmp(self.compiler, omp_compile, omp_link):
                    print(f"mlsom: building with OpenMP (compile {omp_compile}, link {omp_link})")
                    break
            else:
                print("mlsom: WARNING: this compiler cannot build OpenMP code; building serially")
                omp_compile, omp_link = [], []
        for ext in self.extensions:
            ext.extra_compile_args = base + omp_compile + list(ext.extra_compile_args or [])
            ext.extra_link_args = omp_link + sanitize_link + list(ext.extra_link_args or [])
        super().build_extensions()


directives = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

extensions = [
    Extension(
        "mlsom._core",
        sources=["src/mlsom/_core.pyx"],
        include_dirs=[np.get_include(), "src/mlsom"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        # _core.pyx includes one .pxi per phase of the method (docs/architecture.md) and cimports
        # the kernels' declarations (_kernels.pxd); _kernels.h includes the common header and
        # the kernels of each family
        depends=sorted(
            glob.glob("src/mlsom/_kernels*.h")
            + glob.glob("src/mlsom/_core_*.pxi")
            + ["src/mlsom/_kernels.pxd"]
        ),
    )
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=directives),
    cmdclass={"build_ext": BuildExt},
)
