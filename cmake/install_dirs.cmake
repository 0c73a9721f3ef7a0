# Install destinations, set before any target so every layer and tool can use
# them: a plain GNU layout for `cmake --install`, and everything under
# openacl/ in site-packages for a wheel (`pip install .`, where scikit-build-core
# defines SKBUILD), found by the module through its RPATH $ORIGIN/openacl/lib.
include(GNUInstallDirs)
if(SKBUILD)
  set(OPENACL_INSTALL_LIBDIR "openacl/lib")
  set(OPENACL_INSTALL_INCLUDEDIR "openacl/include")
  if(DEFINED SKBUILD_SCRIPTS_DIR)
    set(OPENACL_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
  else()
    set(OPENACL_INSTALL_BINDIR "openacl/bin")
  endif()
else()
  set(OPENACL_INSTALL_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  set(OPENACL_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  set(OPENACL_INSTALL_BINDIR "${CMAKE_INSTALL_BINDIR}")
endif()
set(OPENACL_INSTALL_CMAKEDIR "${OPENACL_INSTALL_LIBDIR}/cmake/OpenACL")
set(OPENACL_INSTALL_PKGCONFIGDIR "${OPENACL_INSTALL_LIBDIR}/pkgconfig")
