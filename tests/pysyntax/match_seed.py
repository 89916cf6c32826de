# Host code with match statements: a seed of the syntax fuzz (fuzz_syntax.py mutates every .py file
# of tests/), so that mutants of every pattern form are compared with Python's parser.
import enum


class Color(enum.Enum):
    RED = 1
    GREEN = 2


def describe(shape, color, options):
    match shape:
        case ():
            kind = "scalar"
        case (n,) if n > 0:
            kind = "vector"
        case [m, n, *rest]:
            kind = "tensor %d" % len(rest)
        case {"rows": m, "cols": n, **extra}:
            kind = "dict"
        case Point(x=0, y=0) | Point(0, 0):
            kind = "origin"
        case -1 | 0.5 | 1 - 2j | "s" "t" | b"" | None | True:
            kind = "literal"
        case Color.RED as c:
            kind = str(c)
        case _:
            kind = "other"
    match color, options:
        case Color.GREEN, {"alpha": (1 | 2) as a}:
            return kind, a
        case *_, last:
            return kind, last
    match = {"case": 1}
    case = match["case"]
    return match, case


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y
