"""`python -m dtsim` and the start-up hook: where Triton is installed, Triton's own host package stays
and every @triton.jit launch runs on dtsim (dtsim.triton_launch); without Triton (or with
DTSIM_STANDIN=1), `import triton` and `import triton.language as tl` resolve to dtsim's stand-in
modules. The guide's `triton_util` is provided where no such module exists."""
import importlib.util
import os
import sys


class _AfterTorchImport:
    """Host code may ask torch about the device before anything launches (`torch.cuda.get_device_properties(0)
    .multi_processor_count` to size a persistent grid): once torch is imported, those queries answer as the
    driver dtsim presents (triton_launch._answer_torch_cuda_queries; nothing changes where torch has a GPU)."""

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
            from dtsim import triton_launch
            triton_launch._answer_torch_cuda_queries()

        spec.loader.exec_module = run
        return spec


def _answer_device_queries():
    from dtsim import triton_launch
    if "torch" in sys.modules:
        triton_launch._answer_torch_cuda_queries()
    elif not any(isinstance(f, _AfterTorchImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorchImport())


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
    sys.modules["triton.language"] = dtsim.language
    sys.modules["triton.language.math"] = dtsim.language
    dtsim.triton.language = dtsim.language
    dtsim.triton.install_modules()
