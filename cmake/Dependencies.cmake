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

# rdma-core: the optional verbs provider for real RNICs.
pkg_check_modules(IBVERBS IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM IMPORTED_TARGET librdmacm)

find_program(RPCGEN_EXECUTABLE rpcgen)
find_program(TSHARK_EXECUTABLE tshark)
find_program(TCPDUMP_EXECUTABLE tcpdump)
