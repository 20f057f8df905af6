# Every header under server/ stands alone: a file that includes it (twice)
# and nothing else compiles, so each module's header names what its
# declarations use and a module can be built and unit-tested by itself.
# A build-time check: the object library below is part of the default
# build, and a header that leans on another's includes fails it.
file(GLOB rigd_headers RELATIVE ${CMAKE_SOURCE_DIR}/server ${CMAKE_SOURCE_DIR}/server/*/*.h)
if(NOT RIGD_CLUSTER)
  list(FILTER rigd_headers EXCLUDE REGEX "^cluster(ed)?/")
endif()
set(rigd_header_sources)
foreach(h ${rigd_headers})
  string(MAKE_C_IDENTIFIER ${h} id)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/headers/${id}.c)
  file(CONFIGURE OUTPUT ${src} CONTENT "#include \"${h}\"\n#include \"${h}\"\n")
  list(APPEND rigd_header_sources ${src})
endforeach()
add_library(header_check OBJECT ${rigd_header_sources})
# The libraries bring the include path and the outside libraries' headers.
target_link_libraries(header_check PRIVATE rigd_serve)
if(RIGD_CLUSTER)
  target_link_libraries(header_check PRIVATE rigd_clustered)
endif()
