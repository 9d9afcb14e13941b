# nm_layer(NAME [CONTROL_PLANE] DEPS...) builds every .cpp directly in the current folder (not its
# subfolders) into one static library nm_<NAME>. New files need no CMake edit; a layer's dependencies are
# listed once, at its definition, and a layer links only layers below it. CONTROL_PLANE: a layer nothing
# measured runs in, built with NM_CONTROL_PLANE_FLAGS (see the top-level CMakeLists.txt).
function(nm_layer name)
  cmake_parse_arguments(L "CONTROL_PLANE" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
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
endfunction()
