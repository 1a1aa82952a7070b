# The critical paths `vramsim explain` reads from a trace file are, line for
# line, those `vramsim run --critical-path` printed for the same run.
#   -DVRAMSIM=<binary> -DSCENARIO=<json> -DPOLICIES=<spec> -DWORK=<dir>
file(MAKE_DIRECTORY ${WORK})
get_filename_component(_name ${SCENARIO} NAME_WE)
set(_trace ${WORK}/${_name}.${POLICIES}.path.jsonl)
execute_process(COMMAND ${VRAMSIM} run ${SCENARIO} --policies ${POLICIES} --trace ${_trace} --critical-path
  OUTPUT_VARIABLE _run ERROR_VARIABLE _err)
execute_process(COMMAND ${VRAMSIM} explain ${_trace} RESULT_VARIABLE _rc OUTPUT_VARIABLE _explain ERROR_VARIABLE _err)
if(NOT "${_rc}" STREQUAL "0")
  message(FATAL_ERROR "explain: exit status ${_rc}\n${_err}")
endif()
# Each block: from "critical path of" to the first blank line.
string(REGEX MATCHALL "critical path of [^\n]*\n(  [^\n]*\n)+" _blocks "${_run}")
list(LENGTH _blocks _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "run printed no critical path:\n${_run}")
endif()
foreach(_b IN LISTS _blocks)
  string(FIND "${_explain}" "${_b}" _pos)
  if(_pos EQUAL -1)
    message(FATAL_ERROR "explain lacks the run's critical path:\n${_b}\nexplain printed:\n${_explain}")
  endif()
endforeach()
string(REGEX MATCHALL "critical path of " _e "${_explain}")
list(LENGTH _e _m)
if(NOT _m EQUAL _n)
  message(FATAL_ERROR "run printed ${_n} critical path(s), explain ${_m}")
endif()
