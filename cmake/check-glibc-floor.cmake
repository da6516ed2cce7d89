# check-glibc-floor.cmake - fails the build when the static tool's loader helper (FILE) asks
# glibc for a symbol version newer than 2.17 (src/lib/bridge/glibc_floor.h): a newer build host's
# headers can redirect a call (glibc 2.38's strtoll to __isoc23_strtoll), and the helper would
# then not run on the old machines it is for. OBJDUMP names objdump.
#   cmake -DFILE=path -DOBJDUMP=objdump -P check-glibc-floor.cmake
execute_process(COMMAND ${OBJDUMP} -T ${FILE} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check-glibc-floor: '${OBJDUMP} -T ${FILE}' failed")
endif()
string(REGEX MATCHALL "GLIBC_[0-9]+\\.[0-9]+(\\.[0-9]+)?\\)[ \t]+[A-Za-z0-9_]+" uses "${syms}")
set(bad "")
foreach(u ${uses})
  string(REGEX MATCH "GLIBC_([0-9.]+)" v "${u}")
  if(CMAKE_MATCH_1 VERSION_GREATER "2.17")
    list(APPEND bad "${u}")
  endif()
endforeach()
if(bad)
  file(REMOVE ${FILE})
  message(FATAL_ERROR "check-glibc-floor: ${FILE} needs glibc newer than 2.17 for: ${bad} "
    "(bind these to an older version in src/lib/bridge/glibc_floor.h)")
endif()
