# Runs kiln-onnx-ops-gen into OUT and compares with the committed files in SRC.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GEN} ${OUT}/OnnxOps.td ${OUT}/OnnxOpVersions.inc
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kiln-onnx-ops-gen failed (${rc})")
endif()
foreach(f OnnxOps.td OnnxOpVersions.inc)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${f} ${SRC}/${f}
                  RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "dialects/onnx/${f} is stale: run `ninja regenerate-onnx-ops`")
  endif()
endforeach()
