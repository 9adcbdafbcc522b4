# NVIDIA's CUDA toolkit, optional: tests build real nvcc programs with it and compare headers and exports against
# NVIDIA's; the product never needs it. Found once here, through CMake's FindCUDAToolkit, which asks nvcc itself
# where its toolkit is (`nvcc -v` prints TOP), so a toolkit reached through a wrapper script or a symlinked nvcc
# (nvcc in /usr/local/bin, no /usr/local/cuda) is found with its real include and library folders. CUDA_HOME, the
# variable NVIDIA's own scripts and samples read, is honoured as a hint. Everything below is empty when no
# toolkit is found; users of these variables say they skipped.
#   PTXFORGE_NVCC                nvcc
#   PTXFORGE_CUDA_ROOT           the toolkit's root (bin/, include/ and the libraries beneath it)
#   PTXFORGE_CUDA_INCLUDE_DIR    where cuda.h is
#   PTXFORGE_CUDA_LIBRARY_DIR    where libcublas.so and the other libraries are
#   PTXFORGE_NVIDIA_LIBCUDA_STUB NVIDIA's stub libcuda.so (link-time only)
if(NOT DEFINED CUDAToolkit_ROOT AND DEFINED ENV{CUDA_HOME} AND EXISTS "$ENV{CUDA_HOME}/bin/nvcc")
  set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}")
endif()
find_package(CUDAToolkit QUIET)
set(PTXFORGE_NVCC "")
set(PTXFORGE_CUDA_ROOT "")
set(PTXFORGE_CUDA_INCLUDE_DIR "")
set(PTXFORGE_CUDA_LIBRARY_DIR "")
set(PTXFORGE_NVIDIA_LIBCUDA_STUB "")
if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
  set(PTXFORGE_NVCC ${CUDAToolkit_NVCC_EXECUTABLE})
  get_filename_component(PTXFORGE_CUDA_ROOT ${CUDAToolkit_BIN_DIR} DIRECTORY)
  find_path(_ptxforge_cuda_h cuda.h PATHS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH NO_CACHE)
  if(_ptxforge_cuda_h)
    string(REGEX REPLACE "/$" "" PTXFORGE_CUDA_INCLUDE_DIR ${_ptxforge_cuda_h})
  endif()
  set(PTXFORGE_CUDA_LIBRARY_DIR ${CUDAToolkit_LIBRARY_DIR})
  if(EXISTS ${CUDAToolkit_LIBRARY_DIR}/stubs/libcuda.so)
    set(PTXFORGE_NVIDIA_LIBCUDA_STUB ${CUDAToolkit_LIBRARY_DIR}/stubs/libcuda.so)
  endif()
  message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} for the tests: ${PTXFORGE_CUDA_ROOT} (nvcc ${PTXFORGE_NVCC}, "
                 "cuda.h in ${PTXFORGE_CUDA_INCLUDE_DIR}, libraries in ${PTXFORGE_CUDA_LIBRARY_DIR})")
else()
  message(STATUS "No CUDA toolkit: the tests that build nvcc programs or compare with NVIDIA's headers skip")
endif()
