# cmake -P script, run at build time by nm_layer for each layer: every `#include "DIR/NAME"` in the
# layer's own files must name the layer's own folder or a folder of a layer below it (its DEPS, and
# theirs). An include that runs back up (or sideways, to a layer not declared) fails the build and names
# the file and the line. Inputs: LAYER (the layer's name), OWN (its folder, relative to the source tree),
# ALLOWED (the folders below it, '|'-separated), FILES (its .cpp/.hpp files, '|'-separated), STAMP (touched
# when every include is allowed).
string(REPLACE "|" ";" ALLOWED "${ALLOWED}")
string(REPLACE "|" ";" FILES "${FILES}")
cmake_minimum_required(VERSION 3.25)   # -P scripts start with no policies set (IN_LIST)
set(bad "")
foreach(file IN LISTS FILES)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" path "${line}")
    get_filename_component(dir "${path}" DIRECTORY)
    if(dir STREQUAL "")
      continue()   # a header beside the file, found by the compiler's own rule
    endif()
    if(NOT dir STREQUAL OWN AND NOT dir IN_LIST ALLOWED)
      string(APPEND bad "\n  ${file}: #include \"${path}\" (${dir}/ is not below ${OWN}/)")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "layer ${LAYER} includes what it does not build on (declare the layer in its DEPS, or "
                      "move the code to the floor that owns it):${bad}")
endif()
file(TOUCH "${STAMP}")
