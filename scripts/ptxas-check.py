#!/usr/bin/env python3
"""Assembles the device code of a step lowered with
`amp-lower-to-nvvm="cubin-format=isa ..."` with ptxas, one kernel module at a
time, for each architecture given: the check that the PTX we emit is valid for
sm_90 and sm_80 without a GPU.

usage: ptxas-check.py LOWERED.mlir --ptxas PATH --arch sm_90 [--arch sm_80]
Prints one line per architecture; exits 1 with ptxas's log on a failure.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BINARY = re.compile(r'gpu\.binary @([\w$.]+)\s*\[#gpu\.object<#nvvm\.target<[^>]*>,'
                    r'(?: properties = \{[^}]*\},)? (?:assembly = )?"')


def read_string(text, start):
    """Decodes the MLIR string literal starting at `start` (after its quote)."""
    out = bytearray()
    i = start
    while text[i] != '"':
        if text[i] == '\\':
            if text[i + 1] == '\\':
                out.append(ord('\\'))
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(text[i].encode())
            i += 1
    return bytes(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lowered")
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--arch", action="append", required=True)
    args = parser.parse_args()
    text = open(args.lowered).read()
    modules = [(m.group(1), read_string(text, m.end())) for m in BINARY.finditer(text)]
    if not modules:
        sys.exit("%s: no gpu.binary op" % args.lowered)
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch:
            for name, ptx in modules:
                if not ptx.startswith(b"//") or b".entry" not in ptx:
                    sys.exit("%s: @%s does not hold PTX text (lower with "
                             "cubin-format=isa)" % (args.lowered, name))
                path = os.path.join(tmp, name + ".ptx")
                with open(path, "wb") as f:
                    f.write(ptx.rstrip(b"\0"))
                run = subprocess.run([args.ptxas, "-arch=" + arch, path, "-o",
                                      os.path.join(tmp, name + ".cubin")],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit("ptxas -arch=%s failed on @%s:\n%s%s" %
                             (arch, name, run.stdout, run.stderr))
            print("%s: %d kernel modules assembled" % (arch, len(modules)))


if __name__ == "__main__":
    main()
