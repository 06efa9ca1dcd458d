# `cmake --install` puts the shared library, the public headers, the tool and a package config
# in place so that another project can `find_package(iotx)` and link `iotx::iotx`.
install(TARGETS iotx EXPORT iotxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/iotx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN "*.in" EXCLUDE)  # version.h.in is a template; its configured version.h goes below
install(FILES ${PROJECT_BINARY_DIR}/include/iotx/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iotx)
if(IOTX_BUILD_TOOLS)
  install(TARGETS iotx_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(IOTX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/iotx)
install(EXPORT iotxTargets NAMESPACE iotx:: DESTINATION ${IOTX_CMAKE_DIR})
configure_package_config_file(cmake/iotxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/iotxConfig.cmake INSTALL_DESTINATION ${IOTX_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/iotxConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/iotxConfig.cmake ${PROJECT_BINARY_DIR}/iotxConfigVersion.cmake
  DESTINATION ${IOTX_CMAKE_DIR})
