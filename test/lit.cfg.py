# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "AMP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.excludes = ["CMakeLists.txt", "README.txt", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.amp_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%amp_src_root", config.amp_src_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%amp_obj_root", config.amp_obj_root))
# MLIR's TableGen files (mlir/Pass/PassBase.td), for amp-tblgen's tests.
config.substitutions.append(
    ("%mlir_include_dir",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "include")))
# The runtime libraries of mlir-runner's printing functions (printMemref*
# lives in the C++ one).
for name in ["mlir_c_runner_utils", "mlir_runner_utils"]:
    config.substitutions.append(
        ("%" + name,
         os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                      "lib" + name + ".so")))

# HWLOC_COMPONENTS: scripts/sanitize.sh turns hwloc's PCI plugin off for MPICH.
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CUDA_ROOT", "CUDA_HOME", "HWLOC_COMPONENTS"])
llvm_config.use_default_substitutions()

tool_dirs = [config.amp_tools_dir, config.llvm_tools_dir]
tools = ["amp-compile", "amp-opt", "amp-run", "amp-capi-test", "amp-tblgen", "amp-gemm-rates"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The CUDA toolkit (ptxas, libdevice) that serializes device code: tests of
# amp-lower-to-nvvm that go down to a fatbin need it.
cuda_root = os.environ.get("CUDA_ROOT") or os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_root, "bin", "ptxas")):
    config.available_features.add("cuda-toolkit")
    config.environment["CUDA_ROOT"] = cuda_root
    config.substitutions.append(("%ptxas", os.path.join(cuda_root, "bin", "ptxas")))

# The host's bf16 dot-product instructions (AVX512-BF16, which every CPU
# with AMX also has): the CPU runtime's native bf16 path is tested there.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if any(line.startswith("flags") and "avx512_bf16" in line.split()
               for line in cpuinfo):
            config.available_features.add("avx512-bf16")
except OSError:
    pass

# MPI (MPICH's mpiexec and the MPI runtime built against it): the tests of
# data-parallel training run their steps over 2 ranks.
import shutil
mpiexec = shutil.which("mpiexec")
if mpiexec and os.path.exists(os.path.join(config.amp_obj_root, "lib", "libAmpMpiRuntime.so")):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpiexec", mpiexec))
