# Runs `vramsim compare` and checks its exit status; on a failure the table
# must list the failed expectations of the required columns.
#   -DVRAMSIM=<binary> -DARGS=<args, ;-separated> -DEXPECT_EXIT=<n>
execute_process(COMMAND ${VRAMSIM} compare ${ARGS} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT "${_rc}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit status ${_rc}, expected ${EXPECT_EXIT}\n${_out}\n${_err}")
endif()
string(FIND "${_out}" "FAILED (" _listed)
if(EXPECT_EXIT EQUAL 1 AND _listed EQUAL -1)
  message(FATAL_ERROR "no failed expectation listed\n${_out}")
endif()
if(EXPECT_EXIT EQUAL 0 AND NOT _listed EQUAL -1)
  message(FATAL_ERROR "a failed expectation listed with exit 0\n${_out}")
endif()
