"""Builds the extension moesim._moesim with CMake (the repository's own build, target _moesim) for the interpreter
that runs pip, in build-python/ (ccache makes a rebuild cheap), and installs it inside the package python/moesim.

The installed module reads the catalog (models/, topologies/, data/) from this checkout, as the CLI does; give
another with MOESIM_DATA_DIR or moesim.set_data_dir().
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("MOESIM_PYTHON_BUILD_DIR", ROOT / "build-python"))
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                               "-DMOESIM_BUILD_TESTS=OFF", "-DMOESIM_PYTHON=ON",
                               # as tools/build.sh: the same flags as build/ share its ccache entries
                               f"-DMOESIM_WERROR={os.environ.get('MOESIM_WERROR', 'OFF')}",
                               f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2), "--target", "_moesim"])
        built = next((build / "python" / "moesim").glob("_moesim*.so"), None)
        if built is None:
            sys.exit(f"setup.py: no _moesim*.so in {build}/python/moesim (pybind11-dev and python3-dev missing? "
                     "tools/setup.sh --python)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("moesim._moesim", sources=[])], cmdclass={"build_ext": CMakeBuild})
