# install-python.cmake - installs the Python packages (python/resource_tracker, python/gpu_tracker,
# python/metaflow_extensions: the Metaflow decorator and card, a namespace package; their .py
# files) where the python3 of the install's prefix looks, run by `cmake --install` and cpack
# (install(SCRIPT) in CMakeLists.txt, which sets RT_PY_SRC, RT_PY_DIR, RT_PY_VERSION_DIR).
# Debian: /usr/lib/python3/dist-packages for the prefix /usr, PREFIX/lib/python3.X/dist-packages
# for another (/usr/local); site-packages where the system has no dist-packages. RT_PY_DIR, when
# set (RT_INSTALL_PYTHONDIR), is the place, relative to the prefix.
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
