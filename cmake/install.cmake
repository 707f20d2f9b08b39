# SPDX-License-Identifier: MIT
# Install rules: the header, both libraries, obc.pc (pkg-config), a CMake
# package (find_package(obc) -> obc::obc, obc::obc_static), the tools and the
# Python package (PREFIX/lib/python3/dist-packages/obc; it finds PREFIX/lib/libobc.so).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(FILES ${CMAKE_SOURCE_DIR}/include/obc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS obc obc_static EXPORT obcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS obcrun obc-perf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT obcTargets NAMESPACE obc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/obc)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/obcConfig.cmake.in
  ${CMAKE_BINARY_DIR}/obcConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/obc)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/obcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/obcConfig.cmake ${CMAKE_BINARY_DIR}/obcConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/obc)

configure_file(${CMAKE_SOURCE_DIR}/cmake/obc.pc.in ${CMAKE_BINARY_DIR}/obc.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/obc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/obc DESTINATION lib/python3/dist-packages
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
