#!/usr/bin/env bash
# One command: build the extension with AddressSanitizer and UndefinedBehaviorSanitizer
# (MLSOM_SANITIZE=1, see setup.py) in a fresh virtual environment, then run the tests of the
# compiled core against it with the sanitizer runtimes preloaded. Any report fails the run.
#   bash .ci/sanitize.sh                 the core tests (below)
#   bash .ci/sanitize.sh tests/x.py ...  the tests given
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "setuptools>=77" "Cython>=3.1" "numpy>=2.0" "pytest>=8" "hypothesis>=6" \
    scipy pandas
# built from a copy of the tree (tracked and untracked files, not the ignored ones), so that the
# sanitized objects never land in the checkout's build/ where an in-place build would pick them up
mkdir "$WORK/tree"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$WORK/tree"
MLSOM_SANITIZE=1 "$WORK/venv/bin/pip" install -q --no-build-isolation --no-deps "$WORK/tree" \
    > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
CC=${CC:-gcc}
PRELOAD="$("$CC" -print-file-name=libasan.so):$("$CC" -print-file-name=libubsan.so)"
mkdir "$WORK/suite" && cp -R tests pyproject.toml "$WORK/suite/"
if [ $# -eq 0 ]; then
    set -- tests/core/test_reference.py tests/core/test_screening.py tests/core/test_lanes.py \
        tests/estimator/test_api.py tests/model_file/test_hostile_model.py \
        tests/core/test_testing_interface.py tests/estimator/test_labels.py \
        tests/model_file/test_labelled_members.py
fi
cd "$WORK/suite"
# leaks: Python keeps objects alive until exit on purpose; ASan's leak check would report them
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
LD_PRELOAD=$PRELOAD \
    "$WORK/venv/bin/python" -m pytest -p no:cacheprovider -q -x "$@"
echo "sanitizers (ASan + UBSan): no report on $*"
