"""Writes .npy files a hostile or broken writer could produce to the directory argv[1]:
headers whose shape overflows or claims more data than the file holds, truncated files,
wrong magic, a big-endian dtype, an absurd header length, a header that is no dict."""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def npy(header, payload=b"", version=1):
    text = header.encode()
    text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + payload


def shape_header(shape, descr="<f4"):
    return f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"


files = {
    # 2^62 x 4 x 4 bytes is 0 modulo 2^64: an unchecked product matches an empty payload.
    "overflow.npy": npy(shape_header("(4611686018427387904, 4)")),
    "overflow3.npy": npy(shape_header("(4611686018427387904, 4, 3)")),
    # 400 GB claimed, no data: must fail before allocating.
    "huge.npy": npy(shape_header("(100000000000,)")),
    "short.npy": npy(shape_header("(8, 3)"), bytes(40)),
    "long.npy": npy(shape_header("(8, 3)"), bytes(200)),
    "truncated_header.npy": npy(shape_header("(8, 3)"))[:30],
    "magic.npy": b"PK\x03\x04" + bytes(100),
    "empty.npy": b"",
    "big_endian.npy": npy(shape_header("(8, 3)", ">f4"), bytes(96)),
    "header_length.npy": b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{}",
    "not_a_dict.npy": npy("[1, 2, 3]"),
    "negative.npy": npy(shape_header("(-8, 3)"), bytes(96)),
    "version.npy": npy(shape_header("(8, 3)"), bytes(96), version=9),
}
for name, data in files.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
