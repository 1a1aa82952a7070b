# Included by CTest (a directory's TEST_INCLUDE_FILES, tests/CMakeLists.txt's
# vramsim_add_test under VRAMSIM_TESTS_BY_SUITE): one CTest test per
# GoogleTest suite of a binary, named after the suite, running the suite's
# tests in one process (--gtest_filter=SUITE.*). The binary lists its tests
# (--gtest_list_tests) when CTest starts, so a suite added since the last
# configure is found. A suite name must be unique across the binaries of the
# build (CTest keeps one test of a name).
#   vramsim_add_suites(<binary> <working dir> <timeout>)
function(vramsim_add_suites binary workdir timeout)
  if(NOT EXISTS "${binary}")
    add_test("${binary}.NOT_BUILT" "${binary}")
    return()
  endif()
  execute_process(COMMAND "${binary}" --gtest_list_tests WORKING_DIRECTORY "${workdir}" TIMEOUT 60
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(WARNING "${binary} --gtest_list_tests failed (${rc}): ${err}")
    add_test("${binary}.LIST_FAILED" "${binary}" --gtest_list_tests)
    return()
  endif()
  string(REPLACE ";" "\\;" listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    # A suite's line ends its name with a dot (then, for typed or
    # parameterised suites, a "  # TypeParam = ..." comment); its tests'
    # lines are indented.
    if(line MATCHES "^([A-Za-z0-9_/]+)\\.( .*)?$")
      set(suite "${CMAKE_MATCH_1}")
      add_test("${suite}" "${binary}" "--gtest_filter=${suite}.*")
      set_tests_properties("${suite}" PROPERTIES WORKING_DIRECTORY "${workdir}" TIMEOUT ${timeout})
    endif()
  endforeach()
endfunction()
