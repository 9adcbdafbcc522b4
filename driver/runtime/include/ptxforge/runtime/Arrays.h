// CUDA arrays, texture objects and surface objects in runtime terms, over the driver API: channel descriptors
// become CUarray_format and channel counts, cudaArray_t is CUarray, and every array copy is one CUDA_MEMCPY3D.
#pragma once

#include "ptxforge/runtime/RuntimeAbi.h"

namespace ptxforge::runtime {

cudaError_t mallocArray(cudaArray_t *Out, const cudaChannelFormatDesc *Desc, cudaExtent Extent, unsigned Flags,
                        bool ThreeD);
/// cudaMallocMipmappedArray: Extent as cudaMalloc3DArray takes it (0 for absent dimensions).
cudaError_t mallocMipmappedArray(cudaMipmappedArray_t *Out, const cudaChannelFormatDesc *Desc, cudaExtent Extent,
                                 unsigned Levels, unsigned Flags);
cudaError_t arrayInfo(cudaChannelFormatDesc *Desc, cudaExtent *Extent, unsigned *Flags, cudaArray_const_t Array);

/// One side of an array copy: an array with an offset (X in bytes, rows, slices), or memory (Ptr, Pitch bytes
/// between rows, Height rows between slices).
struct CopySide {
  cudaArray_const_t Array = nullptr;
  size_t X = 0, Y = 0, Z = 0;
  const void *Ptr = nullptr;
  size_t Pitch = 0, Height = 0;
};
/// Width bytes x Height rows x Depth slices from Src to Dst; Kind says which memory sides are host or device.
cudaError_t copyArray(const CopySide &Src, const CopySide &Dst, size_t Width, size_t Height, size_t Depth, int Kind,
                      bool Async, cudaStream_t Stream);
/// cudaMemcpyToArray/FromArray: Count bytes from byte (X, row Y) on, continuing through the following rows.
cudaError_t copyArrayLinear(cudaArray_const_t Array, size_t X, size_t Y, void *Other, size_t Count, bool ToArray,
                            int Kind, bool Async, cudaStream_t Stream);
cudaError_t copy3D(const cudaMemcpy3DParms *P, bool Async, cudaStream_t Stream);
/// The driver's CUDA_MEMCPY3D for what copyArray copies (graph memcpy nodes take it).
cudaError_t driverCopy(const CopySide &Src, const CopySide &Dst, size_t Width, size_t Height, size_t Depth, int Kind,
                       CUDA_MEMCPY3D &Out);
/// The two sides and the width in bytes of a cudaMemcpy3DParms.
cudaError_t driverCopy3D(const cudaMemcpy3DParms *P, CopySide &Src, CopySide &Dst, size_t &WidthBytes);

cudaError_t createTextureObject(cudaTextureObject_t *Out, const cudaResourceDesc *Res, const cudaTextureDesc *Tex,
                                const cudaResourceViewDesc *View);
cudaError_t createSurfaceObject(cudaSurfaceObject_t *Out, const cudaResourceDesc *Res);
/// The runtime form of an object's resource description (Surface: a surface object's).
cudaError_t objectResourceDesc(cudaResourceDesc *Out, unsigned long long Object, bool Surface);
cudaError_t textureDesc(cudaTextureDesc *Out, cudaTextureObject_t Object);

} // namespace ptxforge::runtime
