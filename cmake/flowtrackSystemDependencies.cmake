# The libraries flowtrack takes from pkg-config, as imported targets, for its own build and for a
# project that finds the installed package (flowtrackConfig.cmake includes this file too):
#   flowtrack::pcap   libpcap
#   flowtrack::sodium libsodium (SipHash and BLAKE2b: the stateful LB's deployment key)
#   flowtrack::dpdk   DPDK (libdpdk), when with_dpdk is true
# The caller has found PkgConfig.
function(flowtrack_import_system_dependencies with_dpdk)
  if(NOT TARGET flowtrack::pcap)
    pkg_check_modules(flowtrack_libpcap REQUIRED IMPORTED_TARGET libpcap)
    add_library(flowtrack::pcap INTERFACE IMPORTED)
    target_link_libraries(flowtrack::pcap INTERFACE PkgConfig::flowtrack_libpcap)
  endif()
  if(NOT TARGET flowtrack::sodium)
    pkg_check_modules(flowtrack_libsodium REQUIRED IMPORTED_TARGET libsodium)
    add_library(flowtrack::sodium INTERFACE IMPORTED)
    target_link_libraries(flowtrack::sodium INTERFACE PkgConfig::flowtrack_libsodium)
  endif()
  if(with_dpdk AND NOT TARGET flowtrack::dpdk)
    pkg_check_modules(flowtrack_libdpdk REQUIRED libdpdk)
    # DPDK's pkg-config flags carry -march=corei7, which would override the build's -march for every file
    # that includes a DPDK header (no AVX2, no BMI: the tables measured 2-3x slower). Take all but that.
    set(compile_flags ${flowtrack_libdpdk_CFLAGS_OTHER})
    list(FILTER compile_flags EXCLUDE REGEX "^-march=")
    add_library(flowtrack::dpdk INTERFACE IMPORTED)
    target_include_directories(flowtrack::dpdk INTERFACE ${flowtrack_libdpdk_INCLUDE_DIRS})
    target_compile_options(flowtrack::dpdk INTERFACE ${compile_flags})
    target_link_libraries(flowtrack::dpdk INTERFACE ${flowtrack_libdpdk_LINK_LIBRARIES})
  endif()
endfunction()
