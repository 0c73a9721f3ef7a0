# Install rules for OpenACL: libascendcl.so, the public headers include/acl/**,
# a CMake package (find_package(OpenACL) -> OpenACL::ascendcl) and a pkg-config
# file (ascendcl.pc). Included by the root CMakeLists.txt after every target exists.
#
#   cmake --install build --prefix /opt/openacl
#       lib/libascendcl.so*, include/acl/*.h, lib/cmake/OpenACL/*.cmake,
#       lib/pkgconfig/ascendcl.pc
#   pip install .   (scikit-build-core defines SKBUILD; the prefix is site-packages)
#       openacl/lib/libascendcl.so*, openacl/include/acl/*.h,
#       openacl/lib/cmake/OpenACL/*.cmake, openacl/lib/pkgconfig/ascendcl.pc
#       The extension module (site-packages/acl*.so) finds the library through its
#       RPATH $ORIGIN/openacl/lib.
#
# Both layouts are relocatable: the CMake package computes its prefix from its own
# location and ascendcl.pc uses ${pcfiledir}.

include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

# Destinations (OPENACL_INSTALL_*DIR) come from cmake/install_dirs.cmake.

if(NOT TARGET ascendcl)
  message(WARNING "cmake/install.cmake: no target 'ascendcl'; nothing to install")
  return()
endif()

# The ascendcl target is declared export-ready (src/capi/CMakeLists.txt): its
# include directory is BUILD_INTERFACE only (INCLUDES DESTINATION below names
# the installed one for each layout) and its link dependencies are private.
# openacl_ompenv: loaded by libascendcl.so (src/kernels/omp_defaults.c), beside it.
install(TARGETS ascendcl openacl_ompenv
  EXPORT OpenACLTargets
  LIBRARY DESTINATION "${OPENACL_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${OPENACL_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${OPENACL_INSTALL_BINDIR}"
  INCLUDES DESTINATION "${OPENACL_INSTALL_INCLUDEDIR}")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/acl"
  DESTINATION "${OPENACL_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.h")

install(EXPORT OpenACLTargets
  NAMESPACE OpenACL::
  FILE OpenACLTargets.cmake
  DESTINATION "${OPENACL_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/OpenACLConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/OpenACLConfig.cmake"
  INSTALL_DESTINATION "${OPENACL_INSTALL_CMAKEDIR}")
# 0.x: a minor release may break the API, so only the same minor version matches.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/OpenACLConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/OpenACLConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/OpenACLConfigVersion.cmake"
  DESTINATION "${OPENACL_INSTALL_CMAKEDIR}")

# pkg-config: paths relative to the .pc file, so the installed tree can move.
file(RELATIVE_PATH OPENACL_PC_PREFIX_FROM_PCDIR
  "/__prefix__/${OPENACL_INSTALL_PKGCONFIGDIR}" "/__prefix__")
string(REGEX REPLACE "/$" "" OPENACL_PC_PREFIX_FROM_PCDIR "${OPENACL_PC_PREFIX_FROM_PCDIR}")
if(IS_ABSOLUTE "${OPENACL_INSTALL_LIBDIR}")
  set(OPENACL_PC_LIBDIR "${OPENACL_INSTALL_LIBDIR}")
else()
  set(OPENACL_PC_LIBDIR "\${prefix}/${OPENACL_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${OPENACL_INSTALL_INCLUDEDIR}")
  set(OPENACL_PC_INCLUDEDIR "${OPENACL_INSTALL_INCLUDEDIR}")
else()
  set(OPENACL_PC_INCLUDEDIR "\${prefix}/${OPENACL_INSTALL_INCLUDEDIR}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/ascendcl.pc.in"
  "${PROJECT_BINARY_DIR}/pkgconfig/ascendcl.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/ascendcl.pc"
  DESTINATION "${OPENACL_INSTALL_PKGCONFIGDIR}")

