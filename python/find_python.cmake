# Finds Python 3 (interpreter and headers) and pybind11 for the module in python/; sets MOESIM_PYTHON_BUILD and,
# when both are there, position-independent code for every library (the module is a shared object that links the
# static module libraries).
#
# Debian's python3-* packages (pytest, pandas, nbconvert) are importable by Debian's interpreter only, so that one
# is preferred over another python3 earlier on PATH (pyenv, conda) unless Python3_EXECUTABLE is given (pip install
# passes the interpreter that runs it).
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Module)
set(PYBIND11_FINDPYTHON ON)
if(Python3_FOUND)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(Python3_FOUND AND pybind11_FOUND)
  set(MOESIM_PYTHON_BUILD ON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  message(STATUS "moesim: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}, pybind11 ${pybind11_VERSION})")
else()
  message(STATUS "moesim: Python module not built: pybind11 or Python 3's headers missing "
                 "(tools/setup.sh --python installs them; -DMOESIM_PYTHON=OFF silences this)")
endif()
