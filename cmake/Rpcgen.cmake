# rpcrdma_rpcgen(TARGET XFILE): the static library TARGET of the XDR
# routines rpcgen generates from XFILE at build time (`rpcgen -c`), with
# the types' header (`rpcgen -h`, named after XFILE: nfs3.x -> nfs3.h) on
# the include path of whatever links TARGET. The public headers (include/)
# are on that path too, so a .x may declare DDP-eligible items as
# rpcrdma_bulk (`%#include <rpcrdma.h>`); the program that links TARGET
# links the library (or the transport layer) that defines
# rpcrdma_xdr_bulk(). Used by rpcrdma-nfs3d and by the tests that speak
# its protocols (xdr/CMakeLists.txt), so each protocol has one .x file.
function(rpcrdma_rpcgen target xfile)
  get_filename_component(stem ${xfile} NAME_WE)
  get_filename_component(xname ${xfile} NAME)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/rpcgen-${target})
  file(MAKE_DIRECTORY ${gen})
  # rpcgen runs beside a copy of the .x: its output then includes
  # "stem.h", not a path from the source tree.
  add_custom_command(
    OUTPUT ${gen}/${stem}.h ${gen}/${stem}_xdr.c
    COMMAND ${CMAKE_COMMAND} -E copy ${xfile} ${gen}/${xname}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${gen}/${stem}.h ${gen}/${stem}_xdr.c
    COMMAND ${RPCGEN_EXECUTABLE} -h -o ${stem}.h ${xname}
    COMMAND ${RPCGEN_EXECUTABLE} -c -o ${stem}_xdr.c ${xname}
    WORKING_DIRECTORY ${gen}
    DEPENDS ${xfile}
    COMMENT "rpcgen ${xname}")
  add_library(${target} STATIC ${gen}/${stem}_xdr.c ${gen}/${stem}.h)
  target_include_directories(${target} PUBLIC ${gen} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${target} PUBLIC PkgConfig::TIRPC)
  # Generated code declares an unused `buf` in every routine and narrows on
  # its XDR_INLINE path; <rpc/rpc.h> redeclares a few libc functions: relax
  # just those, for the generated file only.
  set_source_files_properties(${gen}/${stem}_xdr.c PROPERTIES COMPILE_OPTIONS
    "-Wno-unused-variable;-Wno-redundant-decls;-Wno-conversion;-Wno-unused-parameter;-Wno-missing-prototypes;-Wno-missing-declarations")
endfunction()
