# What `cmake --install` puts under the prefix (FLOWTRACK_INSTALL):
#   lib/libflowtrack.a                    the library
#   include/flowtrack/...                 its headers: the public ones and, under each layer's internal/,
#                                         the details they include (not for users to include), the
#                                         generated version.hpp; the DPDK ones only with DPDK
#   lib/cmake/flowtrack/                  the CMake package: flowtrackConfig.cmake, its version file (same
#                                         major version is compatible), flowtrackTargets.cmake
#                                         (flowtrack::flowtrack), flowtrackSystemDependencies.cmake
#   lib/pkgconfig/flowtrack.pc            the same for pkg-config
#   bin/flowtrack                         the command-line program, when it is built
# The lab (labkit/) is never installed.
include(CMakePackageConfigHelpers)

set(flowtrack_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/flowtrack)

install(TARGETS flowtrack_library EXPORT flowtrackTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(header_excludes)
if(NOT FLOWTRACK_WITH_DPDK)
  foreach(header ${FLOWTRACK_DPDK_HEADERS})
    string(REPLACE "." "\\." header_regex "/flowtrack/${header}$")
    list(APPEND header_excludes REGEX ${header_regex} EXCLUDE)
  endforeach()
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flowtrack ${FLOWTRACK_GENERATED_INCLUDE}/flowtrack
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" ${header_excludes})

install(EXPORT flowtrackTargets NAMESPACE flowtrack:: DESTINATION ${flowtrack_package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flowtrackConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/flowtrackConfig.cmake INSTALL_DESTINATION ${flowtrack_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flowtrackConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flowtrackConfig.cmake ${PROJECT_BINARY_DIR}/flowtrackConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/flowtrackSystemDependencies.cmake
        DESTINATION ${flowtrack_package_dir})

# pkg-config: the library is static, so its users link what it links: the modules it needs are
# Requires (not Requires.private), and threads.
set(FLOWTRACK_PC_REQUIRES "absl_flat_hash_map absl_flat_hash_set absl_hash fmt libcrypto libpcap libsodium")
set(FLOWTRACK_PC_CFLAGS "")
if(FLOWTRACK_WITH_DPDK)
  string(APPEND FLOWTRACK_PC_REQUIRES " libdpdk")
  set(FLOWTRACK_PC_CFLAGS " -DFLOWTRACK_WITH_DPDK=1")
endif()
# The prefix is the .pc file's own place, up from lib/pkgconfig, so that the file holds wherever the tree
# is installed (cmake --install --prefix, a package's staging directory).
set(pkgconfig_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH FLOWTRACK_PC_UP /prefix/${pkgconfig_dir} /prefix)
string(REGEX REPLACE "/$" "" FLOWTRACK_PC_UP ${FLOWTRACK_PC_UP})
configure_file(${PROJECT_SOURCE_DIR}/cmake/flowtrack.pc.in ${PROJECT_BINARY_DIR}/flowtrack.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/flowtrack.pc DESTINATION ${pkgconfig_dir})

if(FLOWTRACK_BUILD_APPS)
  install(TARGETS flowtrack_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
