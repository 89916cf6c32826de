"""Builds the `_dtsim` extension of the dtsim package with the project's CMake (see pyproject.toml).

The CMake build tree is DTSIM_BUILD_DIR when set (an existing tree such as build/ is reused: only its
_dtsim target is brought up to date), else setuptools' build_temp/cmake under build/pip; a tree
without a CMakeCache.txt is configured first (Release, this Python, ccache as the compiler launcher
when it is installed). DTSIM_BUILD_JOBS sets the parallel jobs (default 2)."""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("DTSIM_BUILD_DIR") or os.path.join(os.path.abspath(self.build_temp), "cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            cmd = ["cmake", "-S", SOURCE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                   "-DPython3_EXECUTABLE=" + sys.executable]
            if shutil.which("ccache"):
                cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.check_call(cmd)
        jobs = os.environ.get("DTSIM_BUILD_JOBS", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_dtsim", "-j", jobs])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = glob.glob(os.path.join(build_dir, "python", "dtsim", "_dtsim*" + suffix))
        if not built:
            sys.exit("dtsim: the CMake build made no _dtsim%s in %s (was it configured for another Python, or "
                     "without python3-dev and pybind11-dev? see docs/python.md)" % (suffix, build_dir))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(ext_modules=[CMakeExtension("dtsim._dtsim")], cmdclass={"build_ext": CMakeBuild})
