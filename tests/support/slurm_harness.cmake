# The loopback SLURM clusters the live tests run against
# (tests/live/slurm-harness.sh), and the helper that makes a GoogleTest
# binary against the SLURM layer: included by tests/CMakeLists.txt, so the
# SLURM layer's own tests (tests/backends) and the head's (tests/live) share
# the clusters.
# Live-mode tests (label `live`). Those that talk to SLURM require the
# `slurm` fixture: a loopback single-node SLURM started by slurm-harness.sh
# in a fixed folder of the build tree (VRAMSIM_SLURM_HARNESS in their
# environment) and stopped after the last of them, also when one fails. They
# hold RESOURCE_LOCK slurm so that jobs of two tests never share the one GPU.
# A second loopback SLURM, fixture `slurm_b`, takes half of the head's tests
# and the job-array ones: one after the other on one cluster they would be
# the suite's longest chain.
set(VRAMSIM_SLURM_HARNESS_DIR ${PROJECT_BINARY_DIR}/tests/live/slurm-harness)
set(VRAMSIM_SLURM_HARNESS_B_DIR ${PROJECT_BINARY_DIR}/tests/live/slurm-harness-b)
set(VRAMSIM_SLURM_HARNESS ${PROJECT_SOURCE_DIR}/tests/live/slurm-harness.sh)

# vramsim_slurm_cluster(<fixture> <dir>): a loopback harness's start and stop.
function(vramsim_slurm_cluster fixture dir)
  add_test(NAME live.${fixture}_harness.start COMMAND ${VRAMSIM_SLURM_HARNESS} start ${dir})
  set_tests_properties(live.${fixture}_harness.start PROPERTIES
    FIXTURES_SETUP ${fixture} LABELS live TIMEOUT 150 RESOURCE_LOCK ${fixture})
  add_test(NAME live.${fixture}_harness.stop COMMAND ${VRAMSIM_SLURM_HARNESS} stop ${dir})
  set_tests_properties(live.${fixture}_harness.stop PROPERTIES
    FIXTURES_CLEANUP ${fixture} LABELS live TIMEOUT 90 RESOURCE_LOCK ${fixture})
endfunction()

# vramsim_live_test(<name> <source> [PROPERTIES ...]): one GoogleTest binary
# against the SLURM layer, its tests discovered as live.<Suite>.<Test>.
function(vramsim_live_test name source)
  cmake_parse_arguments(T "" "" "PROPERTIES" ${ARGN})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE vramsim_backend_slurm GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE VRAMSIM_SLURM_HARNESS_SCRIPT="${VRAMSIM_SLURM_HARNESS}")
  gtest_discover_tests(${name} TEST_PREFIX "live." DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS live ${T_PROPERTIES})
endfunction()

