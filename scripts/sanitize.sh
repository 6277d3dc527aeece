#!/usr/bin/env bash
# The test suites under AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer (docs/Hardening.md): configures build-asan/
# with AMP_SANITIZE=address,undefined (the project's code only; Debian's
# libMLIR stays as it is), builds it, runs lit, the unit tests and pytest,
# and prints one line per suite and the suites that failed last.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${AMP_SANITIZE_BUILD_DIR:-build-asan}

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$(command -v python3)" \
    -DAMP_SANITIZE=address,undefined || exit 1
fi
cmake --build "$BUILD_DIR" -j "${AMP_JOBS:-2}" || exit 1

# Leaks are checked at every exit; the suppressions are for code we do not
# build (scripts/sanitize.supp says why for each).
# intercept_tls_get_addr=0: GCC 12's LSan misreads glibc 2.36's table of
# dynamic TLS once PyTorch's libraries are loaded (an entry "DTLS 35 at
# 0x1d083-0x240001e185" under log_threads=1) and its tracer crashes scanning
# it ("Tracer caught signal 11" at exit). Untracked, those blocks are still
# scanned: glibc mallocs them, and the thread's dtv points to them.
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitize.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# MPICH's hwloc loads its PCI plugin at MPI_Init and unloads it, and with it
# libpciaccess, whose globals held its device table: LSan then reports that
# table from an unloaded module, which no suppression can name (kept loaded,
# nothing is reported). The topology of PCI devices is not needed here.
export HWLOC_COMPONENTS=-pci

failed=()
run() {
  local name=$1; shift
  echo "sanitize: $name"
  if "$@"; then echo "sanitize: $name passed"; else failed+=("$name"); fi
}
run lit /usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"
for test in "$BUILD_DIR"/unittests/*Tests; do
  [ -x "$test" ] && run "$(basename "$test")" "$test"
done
# The interpreter is not instrumented: the runtimes must be loaded first,
# into every Python process and no other one (scripts/sanitize-python/
# sitecustomize.py; pyenv's python3 is a bash script, so the interpreter is
# started directly).
python=$(python3 -c "import sys; print(sys.executable)")
run pytest env AMP_SANITIZE_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)" \
  PYTHONPATH="$PWD/scripts/sanitize-python${PYTHONPATH:+:$PYTHONPATH}" \
  AMP_BUILD_DIR="$BUILD_DIR" "$python" -m pytest -q -rs test/python

if ((${#failed[@]})); then
  echo "sanitize: failed: ${failed[*]}"
  exit 1
fi
echo "sanitize: all suites passed"
