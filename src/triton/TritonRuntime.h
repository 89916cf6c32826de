// The fixed host-side part of every emitted Triton module: seeded random inputs identical to dtsim's
// (splitmix64 stream per buffer name), .npy input/output, the `dtsim run` summary lines, timing with
// triton.testing.do_bench, and the command line. Names it relies on (PARAMS, PARAM_TYPES, BUFFERS,
// KERNELS, SIGNATURES, launch, launch_<kernel>) are emitted above it by emit_triton.
#pragma once

namespace dtsim {

inline constexpr const char* kTritonRuntime = R"PY(
_TORCH_DTYPES = {"i1": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
                 "f8e4m3": getattr(torch, "float8_e4m3fn", None), "f8e5m2": getattr(torch, "float8_e5m2", None),
                 "f8e4b8": getattr(torch, "float8_e4m3fnuz", None), "f8e5b16": getattr(torch, "float8_e5m2fnuz", None),
                 "f8e4b15": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}
_FLOATS = ("f8e4m3", "f8e5m2", "f8e4b15", "f8e4b8", "f8e5b16", "f16", "bf16", "f32", "f64")
_NARROW = ("f8e4m3", "f8e5m2", "f8e4b15", "f8e4b8", "f8e5b16", "bf16")  # kept as f32 on the host until they become tensors


# float8e4b15 has no torch dtype: its tensors hold the bytes (uint8), passed as triton.reinterpret(t,
# tl.float8e4b15). Its bits are an f16's shifted right by 7 (the same bias): from f32 as Triton's
# conversion on NVIDIA GPUs (halves away from zero, saturating at 1.75, NaN to 1.75 of its sign).
def _e4b15_bits(a):
    a = np.asarray(a, dtype=np.float32)
    h = np.minimum(np.nan_to_num(np.abs(a), nan=1.75, posinf=1.75), 1.75).astype(np.float64)
    e = np.maximum(np.frexp(h)[1] - 1, -14)
    q = np.ldexp(1.0, e - 3)
    r = np.floor(h / q + 0.5) * q
    bits = (r.astype(np.float16).view(np.uint16) >> 7).astype(np.uint8)
    return bits | (np.signbit(a).astype(np.uint8) << 7)


def _e4b15_values(b):
    b = np.asarray(b, dtype=np.uint16)
    return (((b & 0x80) << 8) | ((b & 0x7F) << 7)).astype(np.uint16).view(np.float16).astype(np.float32)


def _tensor(arr, dtype):
    """A host array of dtype's values as a torch tensor of that type (float8e4b15: its bytes)."""
    if dtype == "f8e4b15":
        return torch.from_numpy(_e4b15_bits(arr))
    return torch.from_numpy(np.ascontiguousarray(arr)).to(_TORCH_DTYPES[dtype])


def _values(t, dtype):
    """A tensor's values on the host, floats of the narrow types widened to f32."""
    a = t.detach().cpu()
    if dtype == "f8e4b15":
        return torch.from_numpy(_e4b15_values(a.numpy()))
    return a.float() if dtype in _NARROW else a
_M64 = (1 << 64) - 1


def _tdiv(a, b):
    """Integer division truncating toward zero (the IR's //)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _tmod(a, b):
    """Remainder with the sign of the dividend (the IR's % on integers)."""
    return a - b * _tdiv(a, b)


def _fnv1a(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & _M64
    return h


def random_data(name, dtype, shape, seed=0):
    """The seeded random data `dtsim run` gives input buffer `name`, as a numpy array."""
    n = 1
    for d in shape:
        n *= d
    state = ((seed * 0x2545F4914F6CDD1D) & _M64) ^ _fnv1a(name)
    out = np.empty(n, dtype=np.float64 if dtype in _FLOATS else np.int64)
    step = 1 << 22
    with np.errstate(over="ignore"):
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            z = np.arange(lo + 1, hi + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(state)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
            if dtype in _FLOATS:
                out[lo:hi] = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 * 2.0 - 1.0
            elif dtype == "i1":
                out[lo:hi] = (z >> np.uint64(63)).astype(np.int64)
            else:
                out[lo:hi] = (z >> np.uint64(60)).astype(np.int64) - 8
    if dtype == "f64":
        arr = out
    elif dtype in _FLOATS:
        arr = out.astype(np.float32)
        if dtype == "f16":
            arr = arr.astype(np.float16)
    elif dtype == "i1":
        arr = out != 0
    else:
        arr = out.astype({"i8": np.int8, "i16": np.int16, "i32": np.int32}.get(dtype, np.int64))
    if n and not np.any(_as_f32(arr, dtype) != 0):
        arr[0] = 1
    return arr.reshape(shape)


def _as_f32(arr, dtype):
    """bf16 and fp8 data are kept as f32 on the host; the zero test must see the rounded values."""
    if dtype in _NARROW:
        return _values(_tensor(arr, dtype), dtype).numpy()
    return arr


def bind(overrides=None):
    """Parameter values: PARAMS with `overrides` (name -> value or text) applied."""
    p = dict(PARAMS)
    for name, v in (overrides or {}).items():
        if name not in p:
            raise SystemExit(f"error: --arg {name}: the program has no scalar or constexpr parameter '{name}'")
        try:
            p[name] = float(v) if PARAM_TYPES[name] in _FLOATS else int(v)
        except ValueError:
            raise SystemExit(f"error: --arg {name}={v}: not a {PARAM_TYPES[name]} value")
    return p


def _read_npy(path, name, dtype, shape):
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SystemExit(f"{path}: error: {e}")
    if tuple(arr.shape) != tuple(shape):
        raise SystemExit(f"{path}: error: shape {tuple(arr.shape)} does not match buffer '{name}' {dtype}{list(shape)}")
    if dtype == "bf16" and arr.dtype == np.uint16:
        return torch.from_numpy(np.ascontiguousarray(arr).view(np.int16)).view(torch.bfloat16)
    return _tensor(arr, dtype)


def _fast_random(dtype, shape, device):
    """Random data of the same ranges made on the device (for timing only: not dtsim's stream)."""
    if dtype == "f8e4b15":
        return _tensor((torch.rand(shape) * 2 - 1).numpy(), dtype).to(device)
    if dtype in _FLOATS:
        return (torch.rand(shape, device=device) * 2 - 1).to(_TORCH_DTYPES[dtype])
    if dtype == "i1":
        return torch.rand(shape, device=device) < 0.5
    return torch.randint(-8, 8, shape, device=device, dtype=_TORCH_DTYPES[dtype])


def make_buffers(params, seed=0, device="cuda", inputs=None, exact=True):
    """Every buffer of the module as a torch tensor on `device`: in/inout buffers from `inputs`
    (name -> .npy path) or seeded random data (dtsim's stream; with exact=False, faster data of the
    same ranges made on the device), out/scratch buffers zero-filled (or from `inputs`)."""
    bufs = {}
    for name, io, dtype, shape_of in BUFFERS:
        shape = tuple(int(d) for d in shape_of(params))
        if inputs and name in inputs:
            t = _read_npy(inputs[name], name, dtype, shape)
        elif io in ("in", "inout") and not exact:
            t = _fast_random(dtype, shape, device)
        elif io in ("in", "inout"):
            arr = random_data(name, dtype, shape, seed)
            t = _tensor(arr, dtype)
        else:
            t = torch.zeros(shape, dtype=_TORCH_DTYPES[dtype])
        bufs[name] = t.to(device)
    return bufs


def run(bufs, params, kernel=None):
    """Launches one kernel (by name) or, with kernel=None, every kernel in order."""
    names, scalars = SIGNATURES[kernel or ""]
    fn = launch if kernel is None else globals()["launch_" + kernel]
    e4b15 = {name for name, _, dtype, _ in BUFFERS if dtype == "f8e4b15"}
    fn(*[triton.reinterpret(bufs[n], tl.float8e4b15) if n in e4b15 else bufs[n] for n in names], *[params[s] for s in scalars])


def _fmt(v):
    return "%.6g" % v


def summary_line(name, dtype, t):
    """The line `dtsim run` prints for a buffer: type, shape, checksum, first values."""
    a = _values(t, dtype)
    a = a.numpy().reshape(-1).astype(np.float64)
    total = float(np.cumsum(a)[-1]) if a.size else 0.0
    first = ", ".join(_fmt(v) for v in a[:8]) + (", ..." if a.size > 8 else "")
    shape = "[" + ", ".join(str(d) for d in t.shape) + "]"
    return f"{name}: {dtype}{shape} checksum={_fmt(total)} first=[{first}]"


def _write_npy(path, t, dtype):
    a = _values(t, dtype)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            np.save(f, a.numpy())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise SystemExit(f"{path}: error: cannot write: {e}")


def bench(bufs, params, device):
    """Median milliseconds of every kernel, then of the whole module, with triton.testing.do_bench
    (L2 flushed between launches). Every kernel runs once first so that later kernels see their inputs."""
    from triton.testing import do_bench
    run(bufs, params)
    out = []
    names = KERNELS + ([""] if len(KERNELS) > 1 else [])
    for k in names:
        ms = do_bench(lambda: run(bufs, params, k or None), warmup=25, rep=100, return_mode="median")
        out.append((k or "<module>", ms))
    return out


def _pairs(items, flag):
    out = {}
    for kv in items:
        name, eq, v = kv.partition("=")
        if not eq or not name or not v:
            raise SystemExit(f"error: '{flag}' expects NAME=VALUE, got '{kv}'")
        out[name] = v
    return out


def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="set a scalar or constexpr parameter")
    ap.add_argument("--in", dest="ins", action="append", default=[], metavar="NAME=FILE.npy", help="data for buffer NAME")
    ap.add_argument("--out", dest="outs", action="append", default=[], metavar="NAME=FILE.npy", help="write buffer NAME after the run")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random input data (as dtsim run)")
    ap.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    ap.add_argument("--bench", action="store_true",
                    help="time every kernel with triton.testing.do_bench instead (inputs made on the device)")
    a = ap.parse_args(argv)
    interp = os.environ.get("TRITON_INTERPRET") == "1"
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu" and not interp:
        raise SystemExit("error: no GPU for Triton (set TRITON_INTERPRET=1 to run on the CPU)")
    params = bind(_pairs(a.arg, "--arg"))
    ins, outs = _pairs(a.ins, "--in"), _pairs(a.outs, "--out")
    known = {b[0]: b[2] for b in BUFFERS}
    for name in list(ins) + list(outs):
        if name not in known:
            raise SystemExit(f"error: the program has no buffer parameter '{name}'")
    bufs = make_buffers(params, a.seed, device, ins, exact=not a.bench)
    if a.bench:
        for k, ms in bench(bufs, params, device):
            print(f"bench {k} {ms:.6f}")
        return 0
    run(bufs, params)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    for name, io, dtype, _ in BUFFERS:
        if io in ("out", "inout"):
            print(summary_line(name, dtype, bufs[name]))
    print("backend: triton interpreter (TRITON_INTERPRET=1, no sanitizer)" if interp
          else f"backend: triton on {device} (no sanitizer)")
    for name, path in outs.items():
        _write_npy(path, bufs[name], known[name])
    return 0


if __name__ == "__main__":
    sys.exit(_main())
)PY";

}  // namespace dtsim
