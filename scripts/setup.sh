#!/usr/bin/env bash
# Brings a fresh Debian 12 machine to a built tree: installs what is missing
# (apt and pip), then configures and builds. Idempotent: with everything
# present it only runs an incremental build.
set -euo pipefail
cd "$(dirname "$0")/.."

LLVM_PREFIX=/usr/lib/llvm-22
BUILD_DIR=${AMP_BUILD_DIR:-build}
APT_PACKAGES=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
              cmake ninja-build ccache g++ libgtest-dev graphviz
              mpich libmpich-dev libzstd-dev libopenblas-openmp-dev)
PIP_PACKAGES=(numpy pytest pytest-xdist scikit-learn matplotlib nanobind ml_dtypes)

missing_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
    missing_apt+=("$pkg")
done
if ((${#missing_apt[@]})); then
  echo "setup: installing ${missing_apt[*]}"
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing_apt[@]}"
fi

missing_pip=()
for pkg in "${PIP_PACKAGES[@]}"; do
  # The import names that differ from the packages'.
  module=${pkg/scikit-learn/sklearn}
  module=${module/pytest-xdist/xdist}
  python3 -c "import ${module}" 2>/dev/null || missing_pip+=("$pkg")
done
if ((${#missing_pip[@]})); then
  echo "setup: pip installing ${missing_pip[*]}"
  python3 -m pip install -q "${missing_pip[@]}"
fi

# oneDNN 3.2 with GNU OpenMP for the CPU runtime's matmuls and convolutions
# (docs/CPU.md says why this one): the library and its headers and CMake
# package, into the Python prefix, where lib/ExecutionEngine looks for them.
ONEDNN_PACKAGES=(onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0)
if [ "$(python3 -m pip show onednn-cpu-gomp onednn-devel-cpu-gomp 2>/dev/null |
       grep -c '^Version: 2023.2.0$')" != 2 ]; then
  echo "setup: pip installing ${ONEDNN_PACKAGES[*]}"
  python3 -m pip install -q --no-deps "${ONEDNN_PACKAGES[@]}"
fi

# PyTorch and torch-mlir for the front end (amp_mlir.torch), CPU use only.
# torch's wheel declares several GB of CUDA wheels it does not need on the
# CPU: install it without dependencies, then the small pure-Python ones and
# the four CUDA libraries `import torch` loads
# (shared/notes/torch-frontend-and-cpu-gemm-facts.md).
TORCH_PACKAGES=(torch==2.15.0 torch-mlir==20261001 nvidia-cufile==1.20.0.107
                nvidia-cusparselt-cu13==0.10.0 nvidia-nvshmem-cu13==3.8.0
                nvidia-nccl-cu13==2.32.3)
TORCH_DEPENDENCIES=(filelock typing-extensions sympy mpmath networkx jinja2
                    markupsafe fsspec)
if ! python3 -c "import torch, torch_mlir" 2>/dev/null; then
  echo "setup: pip installing ${TORCH_PACKAGES[*]} (without their CUDA wheels)"
  python3 -m pip install -q "${TORCH_DEPENDENCIES[@]}"
  python3 -m pip install -q --no-deps "${TORCH_PACKAGES[@]}"
  python3 -c "import torch, torch_mlir" ||
    { echo "setup: torch or torch-mlir does not import"; exit 1; }
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=$LLVM_PREFIX/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM_PREFIX/bin/lit \
    -DPython3_EXECUTABLE="$(command -v python3)"
fi
cmake --build "$BUILD_DIR" -j "${AMP_JOBS:-2}"
