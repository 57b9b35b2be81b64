# cmake -P script, run at every build of the CLI (apps/CMakeLists.txt): writes build_info.hpp from
# build_info.hpp.in with the source tree's commit, whether tracked files differ from it, and the
# build's settings that the configure step saved in SETTINGS. configure_file leaves the header (and so
# the one file that includes it) untouched when nothing changed.
include(${SETTINGS})
set(FLOWTRACK_COMMIT unknown)
set(FLOWTRACK_COMMIT_DIRTY false)
execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT failed AND commit)
  set(FLOWTRACK_COMMIT ${commit})
  execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    set(FLOWTRACK_COMMIT_DIRTY true)
  endif()
endif()
foreach(text FLOWTRACK_BUILD_TYPE FLOWTRACK_COMPILER FLOWTRACK_CXX_FLAGS FLOWTRACK_SANITIZE)
  string(REPLACE "\\" "\\\\" ${text} "${${text}}")
  string(REPLACE "\"" "\\\"" ${text} "${${text}}")
endforeach()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
