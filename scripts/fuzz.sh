#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (docs/Hardening.md):
#   scripts/fuzz.sh pipeline|policy SECONDS
# configures and builds the fuzz target with clang (build-fuzz/, ASan, UBSan
# and coverage on the project's code), seeds it from the repository, runs
# it for SECONDS and prints executions, coverage and the crashes found. The
# corpus it grows stays in build-fuzz/fuzz/TARGET/corpus for the next run;
# crashes land in build-fuzz/fuzz/TARGET/crashes and keep the run going.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/fuzz.sh pipeline|policy SECONDS" >&2; exit 2; }
[ $# -eq 2 ] || usage
TARGET=$1
SECONDS_TO_RUN=$2
case "$TARGET" in pipeline|policy) ;; *) usage ;; esac
[[ "$SECONDS_TO_RUN" =~ ^[0-9]+$ ]] || usage

LLVM_PREFIX=/usr/lib/llvm-22
BUILD_DIR=${AMP_FUZZ_BUILD_DIR:-build-fuzz}
CLANG=${AMP_FUZZ_CLANG:-clang-14}
FUZZER=amp-$TARGET-fuzzer
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=$CLANG CXX=${CLANG/clang/clang++} cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=$LLVM_PREFIX/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM_PREFIX/bin/lit \
    -DPython3_EXECUTABLE="$(command -v python3)" \
    -DAMP_SANITIZE=address,undefined,fuzzer-no-link \
    -DAMP_ENABLE_FUZZERS=ON \
    -DAMP_ENABLE_PYTHON_BINDINGS=OFF -DAMP_ENABLE_CUDA_RUNTIME=OFF
fi
nice -n 19 cmake --build "$BUILD_DIR" -j "${AMP_JOBS:-2}" --target "$FUZZER"

work=$BUILD_DIR/fuzz/$TARGET
rm -rf "$work/seeds"
mkdir -p "$work/corpus" "$work/crashes"
python3 scripts/fuzz-seeds.py "$TARGET" "$work/seeds"
dict=()
[ -f "tools/$FUZZER/$TARGET.dict" ] && dict=(-dict="tools/$FUZZER/$TARGET.dict")

# -fork keeps fuzzing past a crash (MLIR's own parser has some, see
# docs/Hardening.md); new inputs are merged into the first corpus folder.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
nice -n 19 "$BUILD_DIR/bin/$FUZZER" "$work/corpus" "$work/seeds" "${dict[@]}" \
  -fork="${AMP_FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 \
  -ignore_ooms=1 -timeout=30 -rss_limit_mb=4096 \
  -max_total_time="$SECONDS_TO_RUN" -artifact_prefix="$work/crashes/" \
  2>&1 | tee "$work/fuzz.log" | grep -E "^#[0-9]+: cov:|INFO: (fuzzing|done)" || true

# Fork mode's status lines read "#RUNS: cov: EDGES ft: FEATURES corp: N
# exec/s: N oom/timeout/crash: O/T/C time: Ns ...".
last=$(grep -E "^#[0-9]+: cov:" "$work/fuzz.log" | tail -1)
[ -n "$last" ] || { echo "fuzz: $FUZZER did not run (see $work/fuzz.log)"; exit 1; }
field() { sed -nE "s|.*$1 ([^ ]+).*|\1|p" <<<"$last"; }
echo "fuzz: $FUZZER for ${SECONDS_TO_RUN}s:" \
  "$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last") executions," \
  "$(field 'cov:') edges, $(field 'ft:') features," \
  "$(ls "$work/corpus" | wc -l) inputs in the corpus," \
  "oom/timeout/crash $(field 'oom/timeout/crash:')"
crashes=$(find "$work/crashes" -type f | sort)
echo "fuzz: $(grep -c . <<<"$crashes" || true) findings in $work/crashes"
[ -z "$crashes" ] || echo "$crashes"
