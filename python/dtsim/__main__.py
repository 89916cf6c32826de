"""python -m dtsim [OPTIONS] script.py [ARGS...]: runs a Triton script with its kernels launched on
dtsim's interpreter (findings raise dtsim.KernelError).
       python -m dtsim [OPTIONS] -m MODULE [ARGS...]: runs a module as `python -m MODULE` would (e.g. `-m
         pytest tests/`), its kernels on dtsim.
Options: --sanitize=all|bounds|none  --threads=N  --order=sequential|reverse|shuffle:SEED
         --keep-going  --max-steps=N  --timeout=S  --break-if=COND  --break-at=FILE:LINE[ if COND]
         --print-if COND EXPRS [--at LINE]  --backend=interp|cuda
         --viz=FILE.svg|FILE.html (each launch's picture, as `dtsim viz`; {launch}, {kernel} in FILE)
         --view-bounds=warn|span|storage (an access past a view but inside its storage: a warning, the
         default; out of bounds; or allowed)
         --equal-stores=warn|conflict (two instances' stores of bit-identical values to one element: a
         warning, the default, or a write-write conflict; DTSIM_EQUAL_STORES sets the default)
         --autotune=all|first (@triton.autotune: every config run (under the installed Triton, timed:
         the default there) or only the first (the stand-in's default); DTSIM_AUTOTUNE sets the default)
The REPL's quit (or Ctrl-D) ends the script, as pdb's does; Ctrl-C raises KeyboardInterrupt."""
import os
import runpy
import sys

_VALUED = ("sanitize", "threads", "order", "break-if", "break-at", "backend", "max-steps", "timeout", "at", "viz", "view-bounds",
           "equal-stores", "autotune")


def _usage(msg):
    print("python -m dtsim: %s (see --help)" % msg, file=sys.stderr)
    return 2


def main(argv):
    import dtsim
    from dtsim import _dtsim
    if dtsim._ENV_ERROR:  # a bad DTSIM_* variable
        return _usage(dtsim._ENV_ERROR[0])
    from dtsim.dropin import install
    opts = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--":
            i += 1
            break
        if a == "-m":  # -m MODULE: the rest of the line is the module's, as for python -m pdb -m MODULE
            break
        name, eq, value = a[2:].partition("=")
        if not a.startswith("--") or name not in _VALUED + ("keep-going", "print-if"):
            return _usage("unknown option '%s'" % a)
        key = name.replace("-", "_")
        if name == "keep-going":
            opts["keep_going"] = True
        elif name == "print-if":  # --print-if COND EXPRS, as `dtsim run`
            if eq:
                return _usage("'--print-if' takes two values: --print-if COND EXPRS")
            if i + 2 >= len(argv):
                return _usage("'--print-if' expects COND EXPR[,EXPR...]")
            opts.setdefault("print_if", []).append((argv[i + 1], argv[i + 2], 0))
            i += 2
        else:
            if not eq:
                if i + 1 >= len(argv):
                    return _usage("option '%s' needs a value" % a)
                i += 1
                value = argv[i]
            if key in ("break_if", "break_at"):
                opts.setdefault(key, []).append(value)
            elif key == "at":
                if not opts.get("print_if"):
                    return _usage("'--at LINE' must follow a '--print-if'")
                if not value.isdigit() or int(value) < 1:
                    return _usage("'--at' expects a line number >= 1, got '%s'" % value)
                cond, exprs, _ = opts["print_if"][-1]
                opts["print_if"][-1] = (cond, exprs, int(value))
            elif key in ("viz", "view_bounds", "autotune"):
                opts[key] = value  # checked by dtsim.config below
            else:
                err = _dtsim.check_option(key, value)  # the check `dtsim run` makes
                if err:
                    return _usage("'--%s' %s" % (name, err))
                opts[key] = int(value) if key in ("threads", "max_steps") else float(value) if key == "timeout" else value
        i += 1
    if i >= len(argv):
        print("usage: python -m dtsim [OPTIONS] script.py [ARGS...] (see --help)", file=sys.stderr)
        return 2
    try:
        dtsim.config(**opts)
    except (TypeError, ValueError) as e:
        return _usage(str(e))
    install()
    if argv[i] == "-m":
        if i + 1 >= len(argv):
            return _usage("'-m' needs a module name")
        sys.argv = argv[i + 1:]
        sys.path.insert(0, os.getcwd())  # as `python -m` puts the working folder first
        import importlib.util
        try:
            found = importlib.util.find_spec(argv[i + 1])
        except (ImportError, ValueError):
            found = None
        if found is None:
            print("python -m dtsim: No module named %s" % argv[i + 1], file=sys.stderr)
            return 1
        try:
            runpy.run_module(argv[i + 1], run_name="__main__", alter_sys=True)
        except dtsim.Quit as q:
            if q.findings:
                print("dtsim: %s" % q, file=sys.stderr)
        return 0
    script = argv[i]
    if not os.path.isfile(script):
        print("python -m dtsim: can't open file '%s': no such file" % script, file=sys.stderr)
        return 2
    sys.argv = argv[i:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except dtsim.Quit as q:  # the REPL's quit ended the script, as under `python -m pdb`
        if q.findings:
            print("dtsim: %s" % q, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
