# rpcrdma_add_test(NAME n SOURCES a.c ... [LIBS l ...] LABELS unit|e2e|wire|fuzz|interop
#                  [TIMEOUT s] [ARGS ...])
# One program per feature; exit 0 pass, 1 fail, 77 skip (with the reason printed).
function(rpcrdma_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${T_NAME} PRIVATE rpcrdma_warnings ${T_LIBS} Threads::Threads)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
                       SKIP_RETURN_CODE 77)
endfunction()
