# The strict warning set every target in the tree compiles with.
add_library(rpcrdma_warnings INTERFACE)
target_compile_options(rpcrdma_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wpointer-arith -Wcast-align
  -Wstrict-prototypes -Wmissing-prototypes -Wmissing-declarations
  -Wwrite-strings -Wformat=2 -Wundef -Wvla -Wnull-dereference
  -Wimplicit-fallthrough -Wconversion -Wno-sign-conversion
  -Wold-style-definition -Wredundant-decls)
if(RPCRDMA_WERROR)
  target_compile_options(rpcrdma_warnings INTERFACE -Werror)
endif()
