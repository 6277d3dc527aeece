"""The 16-bit sums of the MPI runtime (libAmpMpiRuntime, MpiRuntime.h) against
numpy: two ranks each contribute random bit patterns (normal numbers,
subnormals, infinities, NaNs), and each rank's result must be the f32 sum of
the two rounded to nearest even, which numpy's float16 and ml_dtypes'
bfloat16 additions compute."""
import json
import textwrap

from mpi_runs import BUILD, needs_mpi, run_script

pytestmark = needs_mpi

SCRIPT = textwrap.dedent("""
    import ctypes, json, os, sys
    import ml_dtypes
    import numpy as np
    runtime = ctypes.CDLL(os.path.join({build!r}, "lib", "libAmpMpiRuntime.so"),
                          mode=ctypes.RTLD_GLOBAL)
    rank, size = ctypes.c_int32(), ctypes.c_int32()
    runtime.ampMpiInitialize(ctypes.byref(rank), ctypes.byref(size))

    class Descriptor(ctypes.Structure):  # memref<?xi16>
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("size", ctypes.c_int64),
                    ("stride", ctypes.c_int64)]

    class Unranked(ctypes.Structure):
        _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]

    def memref(array):
        d = Descriptor(array.ctypes.data, array.ctypes.data, 0, array.size, 1)
        return d, Unranked(1, ctypes.addressof(d))

    bits = [np.random.default_rng(r).integers(0, 1 << 16, size=1003, dtype=np.uint16)
            for r in range(2)]
    mismatches = {{}}
    for name, dtype in [("F16", np.float16), ("BF16", ml_dtypes.bfloat16)]:
        send, out = bits[rank.value].copy(), np.zeros(1003, np.uint16)
        (ds, us), (do, uo) = memref(send), memref(out)
        getattr(runtime, "_mlir_ciface_ampMpiAllreduceSum" + name)(ctypes.byref(us),
                                                                   ctypes.byref(uo))
        a, b = (x.view(dtype).astype(np.float32) for x in bits)
        expected = (a + b).astype(dtype)
        got = out.view(dtype)
        same = (got.view(np.uint16) == expected.view(np.uint16)) | (
            np.isnan(got.astype(np.float32)) & np.isnan(expected.astype(np.float32)))
        mismatches[name] = int((~same).sum())
    if rank.value == 1:
        json.dump(mismatches, open(sys.argv[1], "w"))
""")


def test_sums_of_two_ranks_round_like_numpy(tmp_path):
    script = tmp_path / "sums.py"
    script.write_text(SCRIPT.format(build=BUILD))
    out = tmp_path / "mismatches.json"
    result = run_script(script, [out], 2)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text()) == {"F16": 0, "BF16": 0}
