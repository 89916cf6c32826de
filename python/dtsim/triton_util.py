"""The practitioner's guide's helper module, for scripts that `from triton_util import ...` under
dtsim's drop-in. Inside kernels dtsim's frontend recognises print_if and breakpoint_if itself; these
host versions follow the guide's definitions."""
import os


def test_pid_conds(conds, pid_0=[0], pid_1=[0], pid_2=[0]):
    """'=0,>1' holds when pid_0 == 0 and pid_1 > 1 (ops: < > <= >= = !=)."""
    pids = pid_0[0], pid_1[0], pid_2[0]
    for cond, pid in zip(conds.replace(" ", "").split(","), pids):
        if not cond:
            continue
        for op in ("<=", ">=", "!=", "<", ">", "="):
            if cond.startswith(op):
                want = int(cond[len(op):])
                ok = {"<=": pid <= want, ">=": pid >= want, "!=": pid != want, "<": pid < want, ">": pid > want,
                      "=": pid == want}[op]
                if not ok:
                    return False
                break
        else:
            raise ValueError("Rules may only use these ops: '<','>','>=','<=','=', '!='. Invalid rule: '%s'." % cond)
    return True


def breakpoint_if(conds, pid_0=[0], pid_1=[0], pid_2=[0]):
    if test_pid_conds(conds, pid_0, pid_1, pid_2):
        breakpoint()


def print_if(txt, conds, pid_0=[0], pid_1=[0], pid_2=[0]):
    if test_pid_conds(conds, pid_0, pid_1, pid_2):
        print(txt)


def check_tensors_gpu_ready(*tensors):
    for t in tensors:
        contiguous = t.is_contiguous() if callable(getattr(t, "is_contiguous", None)) else getattr(t, "flags", None) is None or t.flags.c_contiguous
        assert contiguous, "A tensor is not contiguous"
        if not os.environ.get("TRITON_INTERPRET") == "1":
            assert getattr(t, "is_cuda", False), "A tensor is not on cuda"


def cdiv(a, b):
    return (a + b - 1) // b
