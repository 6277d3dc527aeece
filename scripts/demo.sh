#!/usr/bin/env bash
# Builds everything, then runs the main job: amp-opt on an example step, in
# the spec's custom form and in the generic form.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BIN=${AMP_BUILD_DIR:-build}/bin
echo "== a training step, parsed, verified and printed by amp-opt"
"$BIN"/amp-opt test/Dialect/Amp/ops.mlir --split-input-file
echo "== the same, printed in generic form and parsed back"
"$BIN"/amp-opt test/Dialect/Amp/ops.mlir --split-input-file --mlir-print-op-generic |
  "$BIN"/amp-opt --split-input-file >/dev/null && echo "round trip: ok"
