#!/usr/bin/env bash
# Builds everything, runs every test runner (lit, unit tests), and prints
# one total over all of them as the last line: `N passed, N failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${AMP_BUILD_DIR:-build}

bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
logs=$(mktemp -d)

# lit: counts from its summary ("Passed: N", "Failed: N", ...).
/usr/lib/llvm-22/bin/lit -v "$BUILD_DIR/test" 2>&1 | tee "$logs/lit.log"
lit_count() {
  sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$logs/lit.log" | tail -1
}
for kind in Passed "Expectedly Failed"; do
  n=$(lit_count "$kind"); passed=$((passed + ${n:-0}))
done
for kind in Failed "Unexpectedly Passed" Unresolved "Timed Out"; do
  n=$(lit_count "$kind"); failed=$((failed + ${n:-0}))
done
lit_total=$(grep -cE "^(PASS|XFAIL|FAIL|XPASS|UNRESOLVED|TIMEOUT):" "$logs/lit.log" || true)
[ "${lit_total:-0}" -gt 0 ] || { echo "lit ran no test"; failed=$((failed + 1)); }

# GoogleTest binaries: one line per test.
for test in "$BUILD_DIR"/unittests/*Tests; do
  [ -x "$test" ] || continue
  "$test" 2>&1 | tee "$logs/unit.log"
  passed=$((passed + $(grep -c "^\[       OK \]" "$logs/unit.log" || true)))
  failed=$((failed + $(grep -c "^\[  FAILED  \] [A-Za-z].*\.[A-Za-z].* (" "$logs/unit.log" || true)))
  if ! grep -q "^\[  PASSED  \]" "$logs/unit.log" &&
     ! grep -q "^\[  FAILED  \]" "$logs/unit.log"; then
    echo "$test did not finish"; failed=$((failed + 1))
  fi
done

# pytest (test/python): counts from its summary ("N passed, M failed, K errors").
# Exit code 5 means no test was collected; any other failure without counts is one.
# The tests are independent processes' worth of work (each compiles its own
# steps), so pytest-xdist runs them on the cores this process may use (not
# nproc, which follows OMP_NUM_THREADS): 929 s alone, 511 s on two workers on
# the 2-core machine. At most 4 workers: each holds PyTorch and a JIT (about
# 1-2 GB), and some tests start 2 threads or 2 MPI ranks of their own. Without
# pytest-xdist (setup.sh installs it) the tests run one after another.
parallel=()
if python3 -c "import xdist" 2>/dev/null; then
  workers=$(python3 -c "import os; print(min(4, len(os.sched_getaffinity(0))))")
  parallel=(-n "$workers")
fi
AMP_BUILD_DIR="$BUILD_DIR" python3 -m pytest -q -rs "${parallel[@]}" test/python 2>&1 |
  tee "$logs/pytest.log"
pytest_rc=${PIPESTATUS[0]}
pytest_count() {
  tail -1 "$logs/pytest.log" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || true
}
n=$(pytest_count passed); passed=$((passed + ${n:-0}))
n_failed=$(pytest_count failed); n_errors=$(pytest_count error)
failed=$((failed + ${n_failed:-0} + ${n_errors:-0}))
if [ "$pytest_rc" -ne 0 ] && [ "$pytest_rc" -ne 5 ] &&
   [ $((${n_failed:-0} + ${n_errors:-0})) -eq 0 ]; then
  echo "pytest exited with $pytest_rc"; failed=$((failed + 1))
fi

rm -rf "$logs"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
