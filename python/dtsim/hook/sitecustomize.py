"""With DTSIM_TRITON=1 and this folder's parent on PYTHONPATH ahead of site-packages, every Python
process started imports dtsim's `triton` (docs/python.md). Python imports a module named
`sitecustomize` at start-up; this one installs the drop-in only when DTSIM_TRITON=1."""
import os

if os.environ.get("DTSIM_TRITON") == "1":
    from dtsim.dropin import install
    install()
