# vramsim report over two traced runs (legacy and fixed), their status
# timelines and a small sweep: PNG and SVG plots, gnuplot without warnings,
# no VRAM plot where no node advertises VRAM_MB, categories drawn as points,
# and a Markdown summary naming both policies.
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
execute_process(COMMAND ${VRAMSIM} sweep ${SCENARIO} --set policies=legacy,fixed --seeds 1..5 -o ${WORK}/runs/sweep.csv
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "vramsim sweep exited ${_rc}: ${_err}")
endif()
execute_process(COMMAND ${VRAMSIM} report ${WORK}/runs -o ${WORK}/out --metric ttr_p95_s --metric ttr_p50_s
                        --slo ttr_p95_s=300 RESULT_VARIABLE _rc
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "vramsim report exited ${_rc}: ${_out}${_err}")
endif()
foreach(_f time-to-running vram-timeline-fixed sweep-sweep-policies-ttr_p95_s)
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
# Under legacy no node advertises VRAM_MB: no plot of zeros, a sentence.
if(EXISTS ${WORK}/out/vram-timeline-legacy.png)
  message(FATAL_ERROR "a VRAM plot for the legacy timeline, where no node tracks VRAM")
endif()
# gnuplot drew every plot without a warning (an empty range, say).
if(EXISTS ${WORK}/out/gnuplot.log)
  file(READ ${WORK}/out/gnuplot.log _log)
  if(NOT _log STREQUAL "")
    message(FATAL_ERROR "gnuplot warned:\n${_log}")
  endif()
endif()
file(READ ${WORK}/out/vram-timeline-fixed.gp _gp)
foreach(_want "with lines dt 2" "set key tmargin" "set yrange [0.000:")
  string(FIND "${_gp}" "${_want}" _pos)
  if(_pos EQUAL -1)
    message(FATAL_ERROR "vram-timeline-fixed.gp lacks '${_want}':\n${_gp}")
  endif()
endforeach()
file(READ ${WORK}/out/sweep-sweep-policies-ttr_p95_s.gp _gp)
foreach(_want "with yerrorbars" "set xtics (\"legacy (empty: not measured)\" 0, \"fixed\" 1)" "SLO: ttr_p95_s = 300")
  string(FIND "${_gp}" "${_want}" _pos)
  if(_pos EQUAL -1)
    message(FATAL_ERROR "sweep-sweep-policies-ttr_p95_s.gp lacks '${_want}':\n${_gp}")
  endif()
endforeach()
file(READ ${WORK}/out/report.md _md)
foreach(_want "| legacy.jsonl | cold-start-a100 | legacy |" "| fixed.jsonl | cold-start-a100 | fixed |"
        "](time-to-running.png)" "VRAM_MB not advertised by any node: booking not tracked"
        "`ttr_p50_s` is empty (not measured) in 5 of 10 rows: policies=legacy (5)")
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
# A --slo that is not METRIC=NUMBER is an input error naming the option.
execute_process(COMMAND ${VRAMSIM} report ${WORK}/runs -o ${WORK}/out2 --slo ttr_p95_s=soon RESULT_VARIABLE _rc
                ERROR_VARIABLE _err)
if(NOT _rc EQUAL 2 OR NOT _err MATCHES "--slo 'ttr_p95_s=soon': expected METRIC=NUMBER")
  message(FATAL_ERROR "bad --slo: exit ${_rc}, '${_err}'")
endif()
