# nm_layer(NAME [CONTROL_PLANE] DEPS...) builds every .cpp directly in the current folder (not its
# subfolders) into one static library nm_<NAME>. New files need no CMake edit; a layer's dependencies are
# listed once, at its definition, and a layer links only layers below it. CONTROL_PLANE: a layer nothing
# measured runs in, built with NM_CONTROL_PLANE_FLAGS (see the top-level CMakeLists.txt).
#
# The build checks the arrows: every `#include "DIR/..."` in a layer's own files must name its own folder
# or the folder of a layer in its DEPS (or theirs, all the way down); cmake/layer_includes.cmake runs before
# the layer compiles and fails the build on an include that runs back up.
function(nm_layer name)
  cmake_parse_arguments(L "CONTROL_PLANE" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp)
  if(sources)
    add_library(nm_${name} STATIC ${sources})
    target_include_directories(nm_${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(nm_${name} PUBLIC ${L_DEPS})
    if(L_CONTROL_PLANE)
      nm_optimize(nm_${name} "${NM_CONTROL_PLANE_FLAGS}")
    endif()
  else()
    add_library(nm_${name} INTERFACE)
    target_include_directories(nm_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(nm_${name} INTERFACE ${L_DEPS})
  endif()

  # The folders this layer may include from: its own and those of every layer below it.
  file(RELATIVE_PATH own ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set(below "")
  foreach(dep IN LISTS L_DEPS)
    if(TARGET ${dep})
      get_target_property(dep_folders ${dep} NM_LAYER_FOLDERS)
      if(dep_folders)
        list(APPEND below ${dep_folders})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES below)
  set_target_properties(nm_${name} PROPERTIES NM_LAYER_FOLDERS "${own};${below}")
  if(sources OR headers)
    # '|' for ';' in the lists: add_custom_command would split a ';' into separate arguments.
    string(REPLACE ";" "|" allowed_arg "${below}")
    string(REPLACE ";" "|" files_arg "${sources};${headers}")
    set(stamp ${CMAKE_CURRENT_BINARY_DIR}/nm_${name}_includes.stamp)
    add_custom_command(OUTPUT ${stamp}
      COMMAND ${CMAKE_COMMAND} -DLAYER=${name} -DOWN=${own} "-DALLOWED=${allowed_arg}" "-DFILES=${files_arg}"
              -DSTAMP=${stamp} -P ${PROJECT_SOURCE_DIR}/cmake/layer_includes.cmake
      DEPENDS ${sources} ${headers} ${PROJECT_SOURCE_DIR}/cmake/layer_includes.cmake
      COMMENT "Checking that layer ${name}'s includes do not run back up" VERBATIM)
    add_custom_target(nm_${name}_includes DEPENDS ${stamp})
    add_dependencies(nm_${name} nm_${name}_includes)
  endif()
endfunction()
