# cmake -P script behind the package.install_and_consume test (see CMakeLists.txt): install, build the
# consumer both ways, run everything it built. Any failing step fails the test with its output.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE Rc OUTPUT_VARIABLE Out ERROR_VARIABLE Err)
  string(REPLACE ";" " " Cmd "${ARGN}")
  if(NOT Rc EQUAL 0)
    message(FATAL_ERROR "failed (${Rc}): ${Cmd}\n${Out}\n${Err}")
  endif()
  message(STATUS "ok: ${Cmd}\n${Out}")
endfunction()

set(Prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${Prefix})

# What an installation holds.
file(GLOB_RECURSE PcFile ${Prefix}/*/ptxforge.pc)
file(GLOB_RECURSE ConfigFile ${Prefix}/*/ptxforgeConfig.cmake)
foreach(Required ${Prefix}/bin/ptxforge ${Prefix}/include/ptxforge/ptxforge.h ${Prefix}/include/ptxforge/ptxforge.hpp
                 ${Prefix}/include/ptxforge/api/Version.h ${Prefix}/include/ptxforge/cuda/cuda.h "${PcFile}"
                 "${ConfigFile}")
  if(NOT EXISTS "${Required}")
    message(FATAL_ERROR "the installation lacks ${Required}")
  endif()
endforeach()
step(${Prefix}/bin/ptxforge --version)
get_filename_component(LibDir "${PcFile}" DIRECTORY)
get_filename_component(LibDir "${LibDir}" DIRECTORY)

# find_package: ptxforge::ptxforge (C++ and C) and ptxforge::cuda.
step(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/with-cmake -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${Prefix}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
     -DPTXFORGE_EXPECTED_VERSION=${VERSION})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/with-cmake)
foreach(Program consumer_cpp consumer_c consumer_cuda)
  step(${WORK_DIR}/with-cmake/${Program})
endforeach()

# pkg-config: the same C++ and C consumers from the command line.
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config is needed for the pkg-config half of this test")
endif()
set(ENV{PKG_CONFIG_PATH} ${LibDir}/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --modversion ptxforge OUTPUT_VARIABLE PcVersion OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT PcVersion STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config says ptxforge ${PcVersion}, the build is ${VERSION}")
endif()
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ptxforge OUTPUT_VARIABLE Flags OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE Rc)
if(NOT Rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ptxforge failed")
endif()
separate_arguments(Flags UNIX_COMMAND "${Flags}")
step(${CXX} -std=c++17 ${CONSUMER_DIR}/consumer.cpp ${Flags} -Wl,-rpath,${LibDir} -o ${WORK_DIR}/pc_consumer_cpp)
step(${CC} ${CONSUMER_DIR}/consumer.c ${Flags} -Wl,-rpath,${LibDir} -o ${WORK_DIR}/pc_consumer_c)
step(${WORK_DIR}/pc_consumer_cpp)
step(${WORK_DIR}/pc_consumer_c)
