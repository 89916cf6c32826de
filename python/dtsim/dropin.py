"""`python -m dtsim` and the start-up hook: where Triton is installed, Triton's own host package stays
and every @triton.jit launch runs on dtsim (dtsim.triton_launch); without Triton (or with
DTSIM_STANDIN=1), `import triton` and `import triton.language as tl` resolve to dtsim's stand-in
modules. The guide's `triton_util` is provided where no such module exists."""
import importlib.util
import os
import sys


class _AfterTorchImport:
    """Calls each of `calls` once torch is imported (see _after_torch)."""

    def __init__(self):
        self.calls = []

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def run(module):
            exec_module(module)
            for call in self.calls:
                call()

        spec.loader.exec_module = run
        return spec


def _after_torch(call):
    """Runs `call` now if torch is imported, else right after `import torch` (one hook for all)."""
    if "torch" in sys.modules:
        call()
        return
    hook = next((f for f in sys.meta_path if isinstance(f, _AfterTorchImport)), None)
    if hook is None:
        hook = _AfterTorchImport()
        sys.meta_path.insert(0, hook)
    if call not in hook.calls:
        hook.calls.append(call)


def _answer_device_queries():
    """Host code may ask torch about the device before anything launches (`torch.cuda.get_device_properties(0)
    .multi_processor_count` to size a persistent grid): once torch is imported, those queries answer as the
    driver dtsim presents (triton_launch._answer_torch_cuda_queries; nothing changes where torch has a GPU)."""
    from dtsim import triton_launch
    _after_torch(triton_launch._answer_torch_cuda_queries)


def _torch_sees_no_triton():
    """Under the stand-in, torch must not take dtsim's `triton` module for Triton: torch decides that
    Triton is installed when `import triton` works (torch.utils._triton.has_triton_package), and its
    Inductor then imports Triton's compiler modules (`import torch._inductor.utils`, which
    torch.compile, torch.library.triton_op and libraries importing them reach). Triton is not
    installed there, which is what torch is told."""
    try:
        import torch.utils._triton as torch_triton
    except Exception:  # noqa: BLE001 - an older or partial torch: nothing to tell it
        return

    def has_triton_package():
        return False

    torch_triton.has_triton_package = has_triton_package
    for name in dir(torch_triton):  # cached answers derived from it (has_triton, has_triton_tma, ...)
        clear = getattr(getattr(torch_triton, name), "cache_clear", None)
        if name.startswith("has_triton") and callable(clear):
            clear()


def install():
    import dtsim
    from dtsim import triton_launch
    if os.environ.get("DTSIM_STANDIN") != "1" and triton_launch.triton_available():
        triton_launch.install()
    else:
        install_standin()
    if dtsim._config["backend"] != "cuda":
        _answer_device_queries()
    if "triton_util" not in sys.modules and importlib.util.find_spec("triton_util") is None:
        import dtsim.triton_util
        sys.modules["triton_util"] = dtsim.triton_util
    return dtsim


def install_standin():
    import dtsim
    import dtsim.language
    import dtsim.triton
    sys.modules["triton"] = dtsim.triton
    _after_torch(_torch_sees_no_triton)
    sys.modules["triton.language"] = dtsim.language
    sys.modules["triton.language.math"] = dtsim.language
    dtsim.triton.language = dtsim.language
    dtsim.triton.install_modules()
