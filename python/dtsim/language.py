"""`triton.language` as host code sees it under dtsim (`import triton.language as tl`).

Kernel bodies are never run by Python: dtsim's C++ frontend reads the kernel's source file. What a
script touches outside kernels is here: `tl.constexpr` (annotations, module constants), the dtypes
(`tl.float16` passed as a constexpr argument, `n: tl.int64` annotations) and every other `tl.*`
name as an object that can be referred to but not called from host code."""


class constexpr:
    """A compile-time value: `BLOCK: tl.constexpr` (an annotation) or `GROUP = tl.constexpr(8)`."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return "constexpr[%r]" % (self.value,)

    def __index__(self):
        return int(self.value)

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __bool__(self):
        return bool(self.value)

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return self.value == _unwrap(other)


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


def _binop(name):
    def op(self, other):
        return constexpr(getattr(self.value, name)(_unwrap(other)))
    return op


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor",
           "lt", "le", "gt", "ge", "ne"):
    for _f in ("__%s__" % _n, "__r%s__" % _n):
        if _f in ("__rlt__", "__rle__", "__rgt__", "__rge__", "__rne__"):
            continue
        setattr(constexpr, _f, _binop(_f))


class dtype:
    """An element type; passed as an argument it is the constexpr `tl.<name>`."""

    def __init__(self, name, bits):
        self.name = name
        self.primitive_bitwidth = bits

    def __repr__(self):
        return "triton.language." + self.name

    def __str__(self):
        return self.name

    @property
    def dtsim_arg(self):
        return "tl." + self.name


float16 = dtype("float16", 16)
bfloat16 = dtype("bfloat16", 16)
float32 = dtype("float32", 32)
float64 = dtype("float64", 64)
int1 = dtype("int1", 1)
int8 = dtype("int8", 8)
int16 = dtype("int16", 16)
int32 = dtype("int32", 32)
int64 = dtype("int64", 64)
uint8 = dtype("uint8", 8)
uint16 = dtype("uint16", 16)
uint32 = dtype("uint32", 32)
uint64 = dtype("uint64", 64)
float8e4nv = dtype("float8e4nv", 8)
float8e5 = dtype("float8e5", 8)
float8e4b15 = dtype("float8e4b15", 8)
float8e4b8 = dtype("float8e4b8", 8)
float8e5b16 = dtype("float8e5b16", 8)
fp16, bf16, fp32, fp64 = float16, bfloat16, float32, float64


class tensor:
    """The type of kernel values (annotations only; kernels run on dtsim's interpreter)."""


class _KernelOnly:
    """A `tl.*` function: its name can be used in host code, a call outside a kernel is an error."""

    def __init__(self, name):
        self.__name__ = name

    def __repr__(self):
        return "<triton.language.%s (dtsim: kernel code only)>" % self.__name__

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _KernelOnly(self.__name__ + "." + name)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("tl.%s runs only inside @triton.jit kernels (dtsim reads the kernel's source; "
                           "host code cannot call it)" % self.__name__)


math = _KernelOnly("math")
PropagateNan = _KernelOnly("PropagateNan")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _KernelOnly(name)
