# Installs the built kiln into a scratch prefix, then configures, builds and runs a tiny
# outside project that does find_package(kiln) and links kiln::kiln; then runs the installed
# `kiln` program (which must find its library through its install RPATH) on what it saved.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${KILN_BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${KILN_SOURCE}/tests/install/consumer -B ${WORK}/build
                        -DCMAKE_PREFIX_PATH=${WORK}/prefix RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed")
endif()
execute_process(COMMAND ${WORK}/build/consumer ${WORK}/model RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "kiln.Tensor\\(\\[\\[12.\\]\\], shape=\\(1, 1\\), dtype=float32\\)")
  message(FATAL_ERROR "the consumer ran wrong (rc=${rc}): ${out}")
endif()
message(STATUS "consumer printed: ${out}")

execute_process(COMMAND ${WORK}/prefix/bin/kiln --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "run DIR")
  message(FATAL_ERROR "the installed kiln --help failed (rc=${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${WORK}/prefix/bin/kiln run ${WORK}/model --input "x=[[1,2]]" --input "y=[[2],[3]]" --input b=4
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "12")
  message(FATAL_ERROR "the installed kiln run failed (rc=${rc}): ${out}${err}")
endif()
message(STATUS "installed kiln run printed: ${out}")
