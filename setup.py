"""Build the compiled core of mlsom.

Everything else (metadata, dependencies, tool settings) lives in pyproject.toml. This file only
declares the Cython extension and chooses compiler flags:

* OpenMP is optional. It is detected per compiler by building a tiny test program; when that fails
  (for instance Apple clang without libomp) the extension is built serially and says so at run time
  (``mlsom.show_config()``). Set ``MLSOM_NO_OPENMP=1`` to build without it on purpose.
* ``MLSOM_DEBUG=1`` turns Cython's bounds checking and wrap-around checks back on, for a debug build
  that the test suite can run against.
"""

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


def _openmp_flags(compiler_type):
    """Return (compile_args, link_args) that enable OpenMP for this compiler family."""
    if compiler_type == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin":
        # Apple clang needs the libomp runtime (Homebrew); the flags are tried and dropped if absent.
        return ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    return ["-fopenmp"], ["-fopenmp"]


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
        omp_compile, omp_link = [], []
        if NO_OPENMP:
            print("mlsom: building without OpenMP (MLSOM_NO_OPENMP is set)")
        else:
            omp_compile, omp_link = _openmp_flags(ctype)
            if not _can_build_openmp(self.compiler, omp_compile, omp_link):
                print("mlsom: WARNING: this compiler cannot build OpenMP code; building serially")
                omp_compile, omp_link = [], []
            else:
                print(f"mlsom: building with OpenMP ({' '.join(omp_compile)})")
        for ext in self.extensions:
            ext.extra_compile_args = base + omp_compile + list(ext.extra_compile_args or [])
            ext.extra_link_args = omp_link + list(ext.extra_link_args or [])
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
        depends=["src/mlsom/_kernels.h"],
    )
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=directives),
    cmdclass={"build_ext": BuildExt},
)
