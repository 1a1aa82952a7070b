# Runs one scenario through the vramsim binary and checks the exit status,
# then compares the whole trace and summary with the stored golden files
# (timestamps included). VRAMSIM_UPDATE_GOLDEN=1 rewrites them instead.
#   -DVRAMSIM=<binary> -DSCENARIO=<json> -DPOLICIES=<spec> -DEXPECT_EXIT=<n>
#   -DGOLDEN=<prefix> -DWORK=<dir> [-DSTATUS_AT=<duration>: also compare the status JSON]
file(MAKE_DIRECTORY ${WORK})
get_filename_component(_name ${GOLDEN} NAME)
set(_trace ${WORK}/${_name}.trace.jsonl)
set(_out ${WORK}/${_name}.out)
set(_kinds trace.jsonl out)
set(_extra)
if(DEFINED STATUS_AT)
  list(APPEND _kinds status.json)
  set(_extra --status-at ${STATUS_AT} --status-json ${WORK}/${_name}.status.json)
endif()
execute_process(
  COMMAND ${VRAMSIM} run ${SCENARIO} --policies ${POLICIES} --trace ${_trace} ${_extra}
  RESULT_VARIABLE _rc OUTPUT_FILE ${_out} ERROR_VARIABLE _err)
if(NOT "${_rc}" STREQUAL "${EXPECT_EXIT}")
  file(READ ${_out} _stdout)
  message(FATAL_ERROR "exit status ${_rc}, expected ${EXPECT_EXIT}\n${_stdout}\n${_err}")
endif()
foreach(kind ${_kinds})
  set(_got ${WORK}/${_name}.${kind})
  set(_want ${GOLDEN}.${kind})
  if("$ENV{VRAMSIM_UPDATE_GOLDEN}" STREQUAL "1")
    configure_file(${_got} ${_want} COPYONLY)
    message(STATUS "updated ${_want}")
  else()
    if(NOT EXISTS ${_want})
      message(FATAL_ERROR "missing golden file ${_want}; run with VRAMSIM_UPDATE_GOLDEN=1 to create it")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${_got} ${_want} RESULT_VARIABLE _diff)
    if(_diff)
      execute_process(COMMAND diff -u ${_want} ${_got} OUTPUT_VARIABLE _d)
      message(FATAL_ERROR "output differs from ${_want}:\n${_d}")
    endif()
  endif()
endforeach()
