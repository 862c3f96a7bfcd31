# Every dependency is a Debian 12 package; README.md says why each is here.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# libtirpc: XDR * streams and xdrproc_t so rpcgen output marshals over RDMA,
# and ONC RPC over TCP as the benchmark baseline.
pkg_check_modules(TIRPC REQUIRED IMPORTED_TARGET libtirpc)

# ISA-L: folded (PCLMUL) CRC32c for MPA FPDUs (crc32_iscsi).
find_path(ISAL_INCLUDE_DIR isa-l/crc.h REQUIRED)
find_library(ISAL_LIBRARY isal REQUIRED)
add_library(rpcrdma::isal UNKNOWN IMPORTED)
set_target_properties(rpcrdma::isal PROPERTIES
  IMPORTED_LOCATION "${ISAL_LIBRARY}" INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")

# libfabric: only the benchmark's comparison program (tcp provider).
pkg_check_modules(FABRIC IMPORTED_TARGET libfabric)

# rdma-core: the optional verbs provider for real RNICs (RPCRDMA_VERBS).
pkg_check_modules(IBVERBS IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM IMPORTED_TARGET librdmacm)
set(rpcrdma_verbs_default OFF)
if(IBVERBS_FOUND AND RDMACM_FOUND)
  set(rpcrdma_verbs_default ON)
endif()
option(RPCRDMA_VERBS "Build the verbs provider (needs libibverbs-dev and librdmacm-dev)"
       ${rpcrdma_verbs_default})
if(RPCRDMA_VERBS AND NOT (IBVERBS_FOUND AND RDMACM_FOUND))
  message(FATAL_ERROR "RPCRDMA_VERBS=ON needs libibverbs and librdmacm (apt-get install "
                      "libibverbs-dev librdmacm-dev)")
endif()
message(STATUS "verbs provider (rdma-core): ${RPCRDMA_VERBS}")

# systemtap-sdt-dev: <sys/sdt.h> for the USDT probes (src/util/probe.h),
# header only; ON by default when the header is there, else the probes
# compile to nothing.
include(CheckIncludeFile)
check_include_file(sys/sdt.h RPCRDMA_SDT_FOUND)
option(RPCRDMA_USDT "USDT probes, provider rpcrdma (needs systemtap-sdt-dev)" ${RPCRDMA_SDT_FOUND})
if(RPCRDMA_USDT)
  if(NOT RPCRDMA_SDT_FOUND)
    message(FATAL_ERROR "RPCRDMA_USDT=ON needs <sys/sdt.h> (apt-get install systemtap-sdt-dev)")
  endif()
  add_compile_definitions(RPCRDMA_HAVE_SDT)
endif()
message(STATUS "USDT probes (sys/sdt.h): ${RPCRDMA_USDT}")

find_program(RPCGEN_EXECUTABLE rpcgen)
find_program(TSHARK_EXECUTABLE tshark)
find_program(TCPDUMP_EXECUTABLE tcpdump)
