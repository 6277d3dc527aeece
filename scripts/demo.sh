#!/usr/bin/env bash
# The demo: builds everything (scripts/setup.sh), then trains the MLP example on the digits on
# the CPU in fp32, f16 with dynamic loss scaling, and bf16, prints a table side by side and
# writes a plot of the loss curves (scripts/demo.py; `--epochs N` and `--out DIR` pass on).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 scripts/demo.py "$@"
