"""Stand-in drivers for tests/compat/selftest/test_runner.py: one case per outcome run_liger.py tells apart
(a pass, a result that differs, an exception), with the same protocol as liger/cases.py."""
import sys

CASES = ["ok", "differs", "raises"]


def main(argv):
    if argv == ["--list"]:
        print("\n".join(CASES))
        return 0
    name = argv[0]
    if name == "ok":
        print("CASE-PASS")
        return 0
    if name == "differs":
        print("MISMATCH: output 0: max abs error 0.5 (atol 1e-05, rtol 1e-05)")
        return 3
    raise ValueError("kaboom in the op")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
