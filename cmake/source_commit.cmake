# Writes OUT (a C++ source defining nm::source_commit()) with the commit of the source tree at SOURCE_DIR,
# as `git describe --always --dirty --abbrev=12` says it, or "" outside a git checkout (a source tarball)
# or without git. Run at every build (target nm_source_commit), the file is rewritten only when the
# commit changed, so only it recompiles.
execute_process(COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12 --match=NO-TAGS-WANTED
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  set(commit "")
endif()
set(text "// Generated at build time by cmake/source_commit.cmake.\n#include \"core/base/version.hpp\"\nnamespace nm {\nconst char* source_commit() { return \"${commit}\"; }\n}  // namespace nm\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
