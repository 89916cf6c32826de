"""Writes small .npy files (format 1.0, little-endian, C order) without numpy, for the tests that
give dtsim input arrays of chosen shapes."""
import random
import struct

_CODES = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "i32": ("<i4", "i"), "f16": ("<f2", "e")}


def write_npy(path, shape, dtype="f32", seed=0):
    """Writes an array of `shape` with seeded values in [-1, 1) (ints in [-4, 4]) to `path`."""
    descr, fmt = _CODES[dtype]
    shape_txt = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    n = 1
    for d in shape:
        n *= d
    rng = random.Random(seed)
    if dtype == "i32":
        values = [rng.randint(-4, 4) for _ in range(n)]
    else:
        values = [rng.uniform(-1.0, 1.0) for _ in range(n)]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (n, fmt), *values))
