# Project-wide compile options, applied through the tenet_options interface target.
add_library(tenet_options INTERFACE)
target_include_directories(tenet_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_options(tenet_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow=local
                                               -Wno-unused-parameter)
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
