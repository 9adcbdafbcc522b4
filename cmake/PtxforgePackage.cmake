# `cmake --install`: the CLI, libptxforge.so with the public embedding headers, libcuda.so.1 with ptxforge's
# cuda.h, libcudart.so.13, the CMake package (ptxforge::ptxforge, ptxforge::cuda) and ptxforge.pc. Only the API headers are
# installed: consumers compile without LLVM or ANTLR headers.
# libcuda.so.1 and libcudart.so.13 go to <libdir>/ptxforge, not <libdir>: installed into /usr/local they would
# otherwise shadow NVIDIA's driver and runtime for every program on the machine.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PTXFORGE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptxforge)
# The installed binaries find libLLVM (and the other non-system libraries they were linked with) where the
# build found them.
set_target_properties(ptxforge ptxforge_api ptxforge_cuda PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ptxforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ptxforge_api EXPORT ptxforgeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ptxforge_cuda EXPORT ptxforgeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ptxforge)
# libcudart.so.13 beside libcuda.so.1 (its RUNPATH $ORIGIN finds it there); `ptxforge exec` looks there.
install(TARGETS ptxforge_cudart LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ptxforge)

set(_api_include ${PROJECT_SOURCE_DIR}/driver/include/ptxforge)
install(FILES ${_api_include}/ptxforge.h ${_api_include}/ptxforge.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxforge)
install(DIRECTORY ${_api_include}/api/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxforge/api
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ptxforge/api/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxforge/api)
install(FILES ${PROJECT_SOURCE_DIR}/driver/include/cuda.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxforge/cuda)

install(EXPORT ptxforgeTargets NAMESPACE ptxforge:: DESTINATION ${PTXFORGE_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ptxforgeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/ptxforgeConfig.cmake INSTALL_DESTINATION ${PTXFORGE_CMAKE_DIR})
# 0.x: minor versions may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/ptxforgeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/ptxforgeConfig.cmake ${PROJECT_BINARY_DIR}/cmake/ptxforgeConfigVersion.cmake
  DESTINATION ${PTXFORGE_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place, so any `--prefix` works.
file(RELATIVE_PATH PTXFORGE_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${CMAKE_CURRENT_LIST_DIR}/ptxforge.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/ptxforge.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/ptxforge.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
