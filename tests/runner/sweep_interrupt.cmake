# A local sweep writes its CSV to a temporary file beside -o and renames it
# at the end: an interrupted sweep leaves the file it would replace as it
# was (exit 130) and no temporary file; a finished one replaces it.
#   -DVRAMSIM=<binary> -DSCENARIO=<file> -DWORK=<dir>
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(_good "good,seed\n1,1\n")
file(WRITE ${WORK}/sweep.csv "${_good}")
# A million runs take far longer than the 4 s before the SIGINT, even in the
# sanitizer build on a loaded machine.
execute_process(COMMAND timeout --preserve-status -s INT 4 ${VRAMSIM} sweep ${SCENARIO} --seeds 1..1000000 -j 2
                        -o ${WORK}/sweep.csv
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 130 OR NOT _err MATCHES "interrupted")
  message(FATAL_ERROR "interrupted sweep: exit ${_rc} (expected 130), '${_err}'")
endif()
file(READ ${WORK}/sweep.csv _now)
if(NOT _now STREQUAL _good)
  message(FATAL_ERROR "the interrupted sweep changed sweep.csv:\n${_now}")
endif()
file(GLOB _left ${WORK}/sweep.csv.tmp-*)
if(_left)
  message(FATAL_ERROR "the interrupted sweep left ${_left}")
endif()
execute_process(COMMAND ${VRAMSIM} sweep ${SCENARIO} --seeds 1..2 -o ${WORK}/sweep.csv
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "sweep exited ${_rc}: ${_err}")
endif()
file(STRINGS ${WORK}/sweep.csv _lines)
list(LENGTH _lines _n)
list(GET _lines 0 _head)
if(NOT _n EQUAL 3 OR NOT _head MATCHES "^seed,jobs_submitted,")
  message(FATAL_ERROR "the finished sweep wrote ${_n} line(s), header '${_head}'")
endif()
file(GLOB _left ${WORK}/sweep.csv.tmp-*)
if(_left)
  message(FATAL_ERROR "the finished sweep left ${_left}")
endif()
