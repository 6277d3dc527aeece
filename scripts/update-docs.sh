#!/usr/bin/env bash
# Copies the reference docs that mlir-tblgen generates from the .td files
# into docs/reference/, where they are committed; a lit test checks that
# they are current.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${AMP_BUILD_DIR:-build}
cmake --build "$BUILD_DIR" --target mlir-doc
mkdir -p docs/reference
cp "$BUILD_DIR"/docs/Dialects/AmpDialect.md docs/reference/AmpDialect.md
cp "$BUILD_DIR"/docs/AmpPasses.md docs/reference/AmpPasses.md
cp "$BUILD_DIR"/docs/Dialects/AmpGPUDialect.md docs/reference/AmpGPUDialect.md
cp "$BUILD_DIR"/docs/AmpConversionPasses.md docs/reference/AmpConversionPasses.md
