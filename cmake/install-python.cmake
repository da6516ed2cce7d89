# install-python.cmake - installs the Python packages (python/resource_tracker, python/gpu_tracker,
# python/metaflow_extensions: the Metaflow decorator and card, a namespace package; their .py
# files) where the python3 of the install's prefix looks, run by `cmake --install` and cpack
# (install(SCRIPT) in CMakeLists.txt, which sets RT_PY_SRC, RT_PY_DIR, RT_PY_VERSION_DIR,
# RT_PY_BUILD: the build directory).
# Debian: /usr/lib/python3/dist-packages for the prefix /usr, PREFIX/lib/python3.X/dist-packages
# for another (/usr/local); site-packages where the system has no dist-packages. RT_PY_DIR, when
# set (RT_INSTALL_PYTHONDIR), is the place, relative to the prefix. Also PREFIX/bin/gpu-tracker,
# gpu_tracker's command (what pip makes of [project.scripts] in python/pyproject.toml): a
# python3 script running gpu_tracker.__main__, which finds the packages where they were put.
if(RT_PY_DIR)
  set(dir "${RT_PY_DIR}")
elseif(EXISTS /usr/lib/python3/dist-packages)
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(dir lib/python3/dist-packages)
  else()
    set(dir lib/${RT_PY_VERSION_DIR}/dist-packages)
  endif()
else()
  set(dir lib/${RT_PY_VERSION_DIR}/site-packages)
endif()
# file(INSTALL) adds $DESTDIR, lists the files in install_manifest.txt and says what it does
file(INSTALL "${RT_PY_SRC}/resource_tracker" "${RT_PY_SRC}/gpu_tracker" "${RT_PY_SRC}/metaflow_extensions"
  DESTINATION "${CMAKE_INSTALL_PREFIX}/${dir}" TYPE DIRECTORY
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
# the gpu-tracker command: written into the build's tree, then installed like the rest
set(pydir "${CMAKE_INSTALL_PREFIX}/${dir}")
if(EXISTS /usr/bin/python3)
  set(shebang "#!/usr/bin/python3")
else()
  set(shebang "#!/usr/bin/env python3")
endif()
set(script "${RT_PY_BUILD}/python-scripts/gpu-tracker")
file(WRITE "${script}" "${shebang}
# gpu-tracker - gpu_tracker's command (python/gpu_tracker/__main__.py), installed by resource-tracker
import sys
if \"${pydir}\" not in sys.path:
    sys.path.append(\"${pydir}\")
from gpu_tracker.__main__ import main
sys.exit(main())
")
file(INSTALL "${script}" DESTINATION "${CMAKE_INSTALL_PREFIX}/bin"
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
