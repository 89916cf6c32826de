"""python -m dtsim [OPTIONS] script.py [ARGS...]: runs a Triton script with `import triton` resolved
to dtsim (kernels run on dtsim's interpreter, findings raise dtsim.KernelError).
Options: --sanitize=all|bounds|none  --threads=N  --order=sequential|reverse|shuffle:SEED
         --keep-going  --break-if=COND  --break-at=FILE:LINE[ if COND]  --backend=interp|cuda"""
import os
import runpy
import sys


def main(argv):
    import dtsim
    from dtsim.dropin import install
    opts = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        name, eq, value = a[2:].partition("=")
        if name not in ("sanitize", "threads", "order", "keep-going", "break-if", "break-at", "backend"):
            print("python -m dtsim: unknown option '%s' (see --help)" % a, file=sys.stderr)
            return 2
        if name == "keep-going":
            opts["keep_going"] = True
        else:
            if not eq:
                if i + 1 >= len(argv):
                    print("python -m dtsim: option '%s' needs a value" % a, file=sys.stderr)
                    return 2
                i += 1
                value = argv[i]
            key = name.replace("-", "_")
            if key in ("break_if", "break_at"):
                opts.setdefault(key, []).append(value)
            else:
                opts[key] = int(value) if key == "threads" else value
        i += 1
    if i >= len(argv):
        print("usage: python -m dtsim [OPTIONS] script.py [ARGS...] (see --help)", file=sys.stderr)
        return 2
    dtsim.config(**opts)
    install()
    script = argv[i]
    sys.argv = argv[i:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
