# vramsim report over two traced runs (legacy and fixed) and a status
# timeline: PNG and SVG plots and a Markdown summary naming both policies.
#   -DVRAMSIM=<binary> -DSCENARIO=<file> -DWORK=<dir>
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/runs)
foreach(_p legacy fixed)
  execute_process(COMMAND ${VRAMSIM} run ${SCENARIO} --policies ${_p} --trace ${WORK}/runs/${_p}.jsonl
                          --status-every 10s --status-csv ${WORK}/runs/timeline-${_p}.csv
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0 AND NOT _rc EQUAL 1)
    message(FATAL_ERROR "vramsim run --policies ${_p} exited ${_rc}: ${_err}")
  endif()
endforeach()
execute_process(COMMAND ${VRAMSIM} report ${WORK}/runs -o ${WORK}/out RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "vramsim report exited ${_rc}: ${_out}${_err}")
endif()
foreach(_f time-to-running vram-timeline-legacy vram-timeline-fixed)
  foreach(_ext png svg)
    if(NOT EXISTS ${WORK}/out/${_f}.${_ext})
      message(FATAL_ERROR "no ${_f}.${_ext} in the report")
    endif()
    file(SIZE ${WORK}/out/${_f}.${_ext} _size)
    if(_size LESS 1000)
      message(FATAL_ERROR "${_f}.${_ext} is only ${_size} bytes")
    endif()
  endforeach()
endforeach()
file(READ ${WORK}/out/report.md _md)
foreach(_want "| legacy.jsonl | cold-start-a100 | legacy |" "| fixed.jsonl | cold-start-a100 | fixed |"
        "](time-to-running.png)")
  string(FIND "${_md}" "${_want}" _pos)
  if(_pos EQUAL -1)
    message(FATAL_ERROR "report.md lacks '${_want}':\n${_md}")
  endif()
endforeach()
# An empty folder is an input error (exit 2) naming it.
file(MAKE_DIRECTORY ${WORK}/empty)
execute_process(COMMAND ${VRAMSIM} report ${WORK}/empty RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 2 OR NOT _err MATCHES "empty: no traces")
  message(FATAL_ERROR "empty folder: exit ${_rc}, '${_err}'")
endif()
