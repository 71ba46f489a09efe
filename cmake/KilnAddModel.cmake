# kiln_add_model(NAME MODEL file.onnx
#                [TARGET host|cuda|cuda-sim] [GPU_ARCH sm_90]
#                [INPUT_SHAPES name=1x3x224x224 ...] [PRECISION fp32|fp16|auto]
#                [EMBED_WEIGHTS] [OPTIONS kiln-compile-flags ...])
#
# Compiles MODEL with Kiln at build time (a custom command that re-runs when the
# model or kiln changes) into the static library target NAME, which the
# application links:
#
#   find_package(Kiln CONFIG REQUIRED)
#   kiln_add_model(classifier MODEL resnet50.onnx INPUT_SHAPES input=1x3x224x224)
#   add_executable(app main.cpp)            # #include "model.h"
#   target_link_libraries(app PRIVATE classifier)
#
# The model is compiled with `--name ID` (ID: NAME with non-identifier characters
# as '_'): its model.h declares it, and the application creates it with
#   kiln::Model model(KILN_MODEL(ID), ID_UPPER_WEIGHTS);   // "" with EMBED_WEIGHTS
# NAME's interface carries the artifact directory (for model.h) and the definition
# <ID upper-cased>_WEIGHTS, the path of its model.weights. The target property
# KILN_ARTIFACT_DIR names the directory. Any number of models link into one
# program: the C ABI is kiln_runtime's, and each model's symbols carry its name
# (KILN_DECLARE_MODEL(ID) declares a model where its model.h is not included).
function(kiln_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 KILN "EMBED_WEIGHTS"
                        "MODEL;TARGET;GPU_ARCH;PRECISION" "INPUT_SHAPES;OPTIONS")
  if(KILN_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model(${name}): unknown arguments: ${KILN_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT KILN_MODEL)
    message(FATAL_ERROR "kiln_add_model(${name}): MODEL file.onnx is required")
  endif()
  if(NOT TARGET Kiln::kiln)
    message(FATAL_ERROR "kiln_add_model(${name}): this Kiln package has no compiler "
                        "(it was built with KILN_RUNTIME_ONLY)")
  endif()
  get_filename_component(model "${KILN_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "kiln_add_model(${name}): MODEL ${model} does not exist")
  endif()
  if(NOT KILN_TARGET)
    set(KILN_TARGET host)
  endif()
  if(NOT KILN_TARGET MATCHES "^(host|cuda|cuda-sim)$")
    message(FATAL_ERROR "kiln_add_model(${name}): TARGET ${KILN_TARGET}: expected host, "
                        "cuda or cuda-sim")
  endif()
  if(KILN_PRECISION AND NOT KILN_PRECISION MATCHES "^(fp32|fp16|auto)$")
    message(FATAL_ERROR "kiln_add_model(${name}): PRECISION ${KILN_PRECISION}: expected "
                        "fp32, fp16 or auto")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.kiln")
  set(outputs "${dir}/model.h" "${dir}/model.cpp" "${dir}/model.weights")
  set(sources "${dir}/model.cpp")
  if(NOT KILN_TARGET STREQUAL "cuda")
    list(APPEND outputs "${dir}/model.o") # the kernels, a native object
    list(APPEND sources "${dir}/model.o")
  endif()
  string(MAKE_C_IDENTIFIER "${name}" id)
  set(args compile "${model}" -o "${dir}" --target ${KILN_TARGET} --name ${id} --quiet)
  if(KILN_GPU_ARCH)
    list(APPEND args --gpu-arch ${KILN_GPU_ARCH})
  endif()
  if(KILN_PRECISION)
    list(APPEND args --precision ${KILN_PRECISION})
  endif()
  foreach(shape IN LISTS KILN_INPUT_SHAPES)
    list(APPEND args --input-shape ${shape})
  endforeach()
  if(KILN_EMBED_WEIGHTS)
    list(APPEND args --embed-weights)
    list(APPEND outputs "${dir}/model_weights.S")
    list(APPEND sources "${dir}/model_weights.S")
  endif()
  list(APPEND args ${KILN_OPTIONS})

  add_custom_command(OUTPUT ${outputs}
    COMMAND Kiln::kiln ${args}
    DEPENDS "${model}" "$<TARGET_FILE:Kiln::kiln>"
    COMMENT "Kiln: compiling ${KILN_MODEL} for ${KILN_TARGET}"
    VERBATIM)
  add_library(${name} STATIC ${sources})
  if(KILN_EMBED_WEIGHTS)
    # An assembler file with .incbin: built by the C++ compiler driver told that
    # it is assembler (the last -x wins over CMake's -x c++), so that the project
    # need not enable ASM.
    set_source_files_properties("${dir}/model_weights.S" PROPERTIES LANGUAGE CXX
      COMPILE_OPTIONS "-x;assembler-with-cpp;-Wa,-I,${dir}"
      OBJECT_DEPENDS "${dir}/model.weights")
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON
                                           LINKER_LANGUAGE CXX
                                           KILN_ARTIFACT_DIR "${dir}")
  target_compile_features(${name} PUBLIC cxx_std_17)
  target_include_directories(${name} PUBLIC "${dir}")
  target_link_libraries(${name} PUBLIC Kiln::kiln_runtime)
  string(TOUPPER "${id}" upper)
  target_compile_definitions(${name} INTERFACE "${upper}_WEIGHTS=\"${dir}/model.weights\"")
endfunction()
