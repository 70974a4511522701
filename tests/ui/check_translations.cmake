# cmake -DLUPDATE=… -DSOURCES=ui -DTS=….ts -DWORK=dir -P check_translations.cmake
# Runs lupdate over the sources into a copy of the .ts and fails when any
# message is unfinished (a new string without translation, or one left open).
file(MAKE_DIRECTORY ${WORK})
get_filename_component(name ${TS} NAME)
configure_file(${TS} ${WORK}/${name} COPYONLY)
execute_process(COMMAND ${LUPDATE} -no-obsolete -locations none ${SOURCES} -ts ${WORK}/${name}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lupdate failed (${rc}): ${out} ${err}")
endif()
message(STATUS "${out}")
file(READ ${WORK}/${name} text)
string(REGEX MATCHALL "<source>[^<]*</source>[^<]*<translation type=\"unfinished\"" unfinished "${text}")
list(LENGTH unfinished count)
string(REGEX MATCHALL "<translation type=\"unfinished\"" all_unfinished "${text}")
list(LENGTH all_unfinished all_count)
if(all_count GREATER 0)
  foreach(entry IN LISTS unfinished)
    message(STATUS "untranslated: ${entry}")
  endforeach()
  message(FATAL_ERROR "${all_count} user-visible strings have no Vietnamese translation in ${name}")
endif()
message(STATUS "every string of ${SOURCES} is translated in ${name}")
# SPDX-License-Identifier: GPL-3.0-or-later
