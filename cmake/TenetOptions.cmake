# Project-wide compile options, applied through the tenet_options interface target.
add_library(tenet_options INTERFACE)
target_include_directories(tenet_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_options(tenet_options INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
# __FILE__ relative to the source tree: internal-error messages name
# "codegen/cpp_expr.cpp", not the build machine's folders (debug information
# keeps the full paths).
target_compile_options(tenet_options INTERFACE -fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12's -Wmaybe-uninitialized reports false positives through std::optional
  # at -O2 (GCC bug 80635); real uninitialised reads are caught by the sanitizer
  # build and by clang's -Wuninitialized.
  target_compile_options(tenet_options INTERFACE -Wshadow=local -Wno-maybe-uninitialized)
else()
  target_compile_options(tenet_options INTERFACE -Wshadow-uncaptured-local)
endif()
if(TENET_WERROR)
  target_compile_options(tenet_options INTERFACE -Werror)
endif()
if(TENET_SANITIZE)
  target_compile_options(tenet_options INTERFACE -fsanitize=address,undefined
                                                 -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(tenet_options INTERFACE -fsanitize=address,undefined)
endif()
find_package(Threads REQUIRED)
target_link_libraries(tenet_options INTERFACE Threads::Threads ${CMAKE_DL_LIBS})

# tenet_module(NAME DEPS...): a static library from every .cpp in the current folder.
function(tenet_module name)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${name} STATIC ${srcs})
  target_link_libraries(${name} PUBLIC tenet_options ${ARGN})
endfunction()
