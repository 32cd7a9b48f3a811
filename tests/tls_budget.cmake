# Fails when LIBRARY's thread-local storage (its PT_TLS segment) is larger than MAX_BYTES.
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} -lW ${LIBRARY} OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIBRARY}")
endif()
# "  TLS  offset vaddr paddr filesz memsz flags align": memsz is the sixth field.
string(REGEX MATCH "\n +TLS +0x[0-9a-f]+ +0x[0-9a-f]+ +0x[0-9a-f]+ +0x[0-9a-f]+ +(0x[0-9a-f]+)" tls "${headers}")
if(NOT tls)
  message(STATUS "${LIBRARY} has no thread-local storage")
  return()
endif()
math(EXPR bytes "${CMAKE_MATCH_1}" OUTPUT_FORMAT DECIMAL)
message(STATUS "thread-local storage of ${LIBRARY}: ${bytes} bytes (at most ${MAX_BYTES})")
if(bytes GREATER MAX_BYTES)
  message(FATAL_ERROR "${LIBRARY} has ${bytes} bytes of thread-local storage, more than ${MAX_BYTES}: "
                      "keep large per-thread state on the heap behind a thread-local pointer")
endif()
