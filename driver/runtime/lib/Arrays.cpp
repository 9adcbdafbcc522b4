// CUDA arrays, texture and surface objects in runtime terms (Arrays.h), over libcuda.so.1's driver API.
#include "ptxforge/runtime/Arrays.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/RuntimeContext.h"

#include <algorithm>

using namespace ptxforge::runtime;

namespace {

cudaError_t drv(CUresult R) { return fromDriver(R); }

/// A channel descriptor as the driver's format and channel count: equal sizes in the first 1, 2 or 4 channels.
cudaError_t driverFormat(const cudaChannelFormatDesc &D, CUarray_format &F, unsigned &Channels) {
  int Bits = D.x;
  const int Sizes[4] = {D.x, D.y, D.z, D.w};
  Channels = 0;
  while (Channels < 4 && Sizes[Channels])
    ++Channels;
  for (unsigned I = 0; I < 4; ++I)
    if (I < Channels ? Sizes[I] != Bits : Sizes[I] != 0)
      return cudaErrorInvalidChannelDescriptor;
  if (Channels == 0 || Channels == 3)
    return cudaErrorInvalidChannelDescriptor;
  switch (D.f) {
  case cudaChannelFormatKindSigned:
  case cudaChannelFormatKindUnsigned: {
    bool S = D.f == cudaChannelFormatKindSigned;
    if (Bits == 8)
      F = S ? CU_AD_FORMAT_SIGNED_INT8 : CU_AD_FORMAT_UNSIGNED_INT8;
    else if (Bits == 16)
      F = S ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT16;
    else if (Bits == 32)
      F = S ? CU_AD_FORMAT_SIGNED_INT32 : CU_AD_FORMAT_UNSIGNED_INT32;
    else
      return cudaErrorInvalidChannelDescriptor;
    return cudaSuccess;
  }
  case cudaChannelFormatKindFloat:
    if (Bits != 16 && Bits != 32)
      return cudaErrorInvalidChannelDescriptor;
    F = Bits == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
    return cudaSuccess;
  default:
    return cudaErrorInvalidChannelDescriptor;
  }
}

unsigned formatBytes(CUarray_format F) {
  switch (F) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
  case CU_AD_FORMAT_SIGNED_INT8:
    return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16:
  case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF:
    return 2;
  default:
    return 4;
  }
}

cudaChannelFormatDesc channelDesc(CUarray_format F, unsigned Channels) {
  int Bits = static_cast<int>(formatBytes(F) * 8);
  cudaChannelFormatKind K =
      F == CU_AD_FORMAT_HALF || F == CU_AD_FORMAT_FLOAT ? cudaChannelFormatKindFloat
      : F == CU_AD_FORMAT_SIGNED_INT8 || F == CU_AD_FORMAT_SIGNED_INT16 || F == CU_AD_FORMAT_SIGNED_INT32
          ? cudaChannelFormatKindSigned
          : cudaChannelFormatKindUnsigned;
  return {Bits, Channels > 1 ? Bits : 0, Channels > 2 ? Bits : 0, Channels > 3 ? Bits : 0, K};
}

/// Bytes of one element of Array (0 for a handle the driver does not know).
size_t elementBytes(cudaArray_const_t Array) {
  CUDA_ARRAY3D_DESCRIPTOR D;
  if (cuArray3DGetDescriptor(&D, const_cast<CUarray>(Array)) != CUDA_SUCCESS)
    return 0;
  return formatBytes(D.Format) * D.NumChannels;
}

bool validKind(int Kind) { return Kind >= cudaMemcpyHostToHost && Kind <= cudaMemcpyDefault; }

/// Memory on side IsDst of a Kind copy: host, device, or (cudaMemcpyDefault) looked up.
CUmemorytype memoryType(int Kind, bool IsDst) {
  if (Kind == cudaMemcpyDefault)
    return CU_MEMORYTYPE_UNIFIED;
  bool Device = IsDst ? (Kind == cudaMemcpyHostToDevice || Kind == cudaMemcpyDeviceToDevice)
                      : (Kind == cudaMemcpyDeviceToHost || Kind == cudaMemcpyDeviceToDevice);
  return Device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

} // namespace

namespace {
/// The driver's description of an array of Desc's format and Extent's size.
cudaError_t arrayDescriptor(const cudaChannelFormatDesc *Desc, cudaExtent Extent, unsigned Flags,
                            CUDA_ARRAY3D_DESCRIPTOR &D) {
  if (!Desc)
    return cudaErrorInvalidValue;
  if (cudaError_t E = ensureContext())
    return E;
  D = {};
  if (cudaError_t E = driverFormat(*Desc, D.Format, D.NumChannels))
    return E;
  D.Width = Extent.width, D.Height = Extent.height, D.Depth = Extent.depth, D.Flags = Flags;
  return cudaSuccess;
}
} // namespace

cudaError_t ptxforge::runtime::mallocMipmappedArray(cudaMipmappedArray_t *Out, const cudaChannelFormatDesc *Desc,
                                                    cudaExtent Extent, unsigned Levels, unsigned Flags) {
  CUDA_ARRAY3D_DESCRIPTOR D;
  if (!Out)
    return cudaErrorInvalidValue;
  if (cudaError_t E = arrayDescriptor(Desc, Extent, Flags, D))
    return E;
  return drv(cuMipmappedArrayCreate(Out, &D, Levels));
}

cudaError_t ptxforge::runtime::mallocArray(cudaArray_t *Out, const cudaChannelFormatDesc *Desc, cudaExtent Extent,
                                           unsigned Flags, bool ThreeD) {
  if (!Out)
    return cudaErrorInvalidValue;
  CUDA_ARRAY3D_DESCRIPTOR D;
  if (cudaError_t E = arrayDescriptor(Desc, {Extent.width, Extent.height, ThreeD ? Extent.depth : 0}, Flags, D))
    return E;
  if (!ThreeD && (Flags & ~unsigned(cudaArraySurfaceLoadStore | cudaArrayTextureGather)))
    return cudaErrorInvalidValue; // cudaMallocArray makes 1D and 2D arrays only
  CUarray A;
  if (cudaError_t E = drv(cuArray3DCreate(&A, &D)))
    return E;
  *Out = A;
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::arrayInfo(cudaChannelFormatDesc *Desc, cudaExtent *Extent, unsigned *Flags,
                                         cudaArray_const_t Array) {
  CUDA_ARRAY3D_DESCRIPTOR D;
  if (cudaError_t E = drv(cuArray3DGetDescriptor(&D, const_cast<CUarray>(Array))))
    return E;
  if (Desc)
    *Desc = channelDesc(D.Format, D.NumChannels);
  if (Extent)
    *Extent = {D.Width, D.Height, D.Depth};
  if (Flags)
    *Flags = D.Flags;
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::driverCopy(const CopySide &Src, const CopySide &Dst, size_t Width, size_t Height,
                                          size_t Depth, int Kind, CUDA_MEMCPY3D &C) {
  if (!validKind(Kind))
    return cudaErrorInvalidMemcpyDirection;
  C = {};
  C.WidthInBytes = Width, C.Height = Height, C.Depth = Depth;
  auto Fill = [&](const CopySide &S, bool IsDst) {
    CUmemorytype T = S.Array ? CU_MEMORYTYPE_ARRAY : memoryType(Kind, IsDst);
    CUarray A = const_cast<CUarray>(S.Array);
    CUdeviceptr P = reinterpret_cast<CUdeviceptr>(S.Ptr);
    if (IsDst) {
      C.dstMemoryType = T, C.dstArray = A, C.dstDevice = P, C.dstHost = const_cast<void *>(S.Ptr);
      C.dstXInBytes = S.X, C.dstY = S.Y, C.dstZ = S.Z, C.dstPitch = S.Pitch, C.dstHeight = S.Height;
    } else {
      C.srcMemoryType = T, C.srcArray = A, C.srcDevice = P, C.srcHost = S.Ptr;
      C.srcXInBytes = S.X, C.srcY = S.Y, C.srcZ = S.Z, C.srcPitch = S.Pitch, C.srcHeight = S.Height;
    }
  };
  Fill(Src, false);
  Fill(Dst, true);
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::copyArray(const CopySide &Src, const CopySide &Dst, size_t Width, size_t Height,
                                         size_t Depth, int Kind, bool Async, cudaStream_t Stream) {
  if (!validKind(Kind))
    return cudaErrorInvalidMemcpyDirection;
  if (cudaError_t E = ensureContext())
    return E;
  if (!Width || !Height || !Depth)
    return cudaSuccess;
  CUDA_MEMCPY3D C;
  if (cudaError_t E = driverCopy(Src, Dst, Width, Height, Depth, Kind, C))
    return E;
  return drv(Async ? cuMemcpy3DAsync(&C, Stream) : cuMemcpy3D(&C));
}

cudaError_t ptxforge::runtime::copyArrayLinear(cudaArray_const_t Array, size_t X, size_t Y, void *Other, size_t Count,
                                               bool ToArray, int Kind, bool Async, cudaStream_t Stream) {
  cudaExtent E;
  size_t Bytes = elementBytes(Array);
  if (!Bytes || arrayInfo(nullptr, &E, nullptr, Array))
    return cudaErrorInvalidResourceHandle;
  size_t Row = E.width * Bytes;
  if (X >= Row && Count)
    return cudaErrorInvalidValue;
  // The array's rows are contiguous: a partial first row, whole rows, a partial last row.
  char *P = static_cast<char *>(Other);
  while (Count) {
    size_t N = std::min(Count, Row - X), Rows = 1;
    if (X == 0 && Count >= Row)
      Rows = Count / Row, N = Row;
    CopySide A, M;
    A.Array = Array, A.X = X, A.Y = Y;
    M.Ptr = P, M.Pitch = N;
    if (cudaError_t R = ToArray ? copyArray(M, A, N, Rows, 1, Kind, Async, Stream)
                                : copyArray(A, M, N, Rows, 1, Kind, Async, Stream))
      return R;
    P += N * Rows, Count -= N * Rows, Y += (X + N) / Row + Rows - 1, X = (X + N) % Row;
  }
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::driverCopy3D(const cudaMemcpy3DParms *P, CopySide &Src, CopySide &Dst,
                                            size_t &WidthBytes) {
  if (!P || (P->srcArray && P->srcPtr.ptr) || (P->dstArray && P->dstPtr.ptr) || (!P->srcArray && !P->srcPtr.ptr) ||
      (!P->dstArray && !P->dstPtr.ptr))
    return cudaErrorInvalidValue;
  // Extents and x positions count elements where a side is an array, bytes otherwise.
  size_t SrcBytes = P->srcArray ? elementBytes(P->srcArray) : 1, DstBytes = P->dstArray ? elementBytes(P->dstArray) : 1;
  if (!SrcBytes || !DstBytes)
    return cudaErrorInvalidResourceHandle;
  size_t Unit = P->srcArray ? SrcBytes : DstBytes;
  if (P->srcArray && P->dstArray && SrcBytes != DstBytes)
    return cudaErrorInvalidValue;
  auto Side = [](cudaArray_const_t A, const cudaPos &Pos, const cudaPitchedPtr &Ptr, size_t Bytes) {
    CopySide S;
    S.Array = A, S.X = Pos.x * Bytes, S.Y = Pos.y, S.Z = Pos.z;
    S.Ptr = Ptr.ptr, S.Pitch = Ptr.pitch, S.Height = Ptr.ysize;
    return S;
  };
  Src = Side(P->srcArray, P->srcPos, P->srcPtr, SrcBytes);
  Dst = Side(P->dstArray, P->dstPos, P->dstPtr, DstBytes);
  WidthBytes = P->extent.width * Unit;
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::copy3D(const cudaMemcpy3DParms *P, bool Async, cudaStream_t Stream) {
  CopySide Src, Dst;
  size_t Width;
  if (cudaError_t E = driverCopy3D(P, Src, Dst, Width))
    return E;
  return copyArray(Src, Dst, Width, P->extent.height, P->extent.depth, P->kind, Async, Stream);
}

// ---- texture and surface objects ----
namespace {

cudaError_t driverResource(const cudaResourceDesc &R, CUDA_RESOURCE_DESC &D) {
  D = {};
  D.resType = static_cast<CUresourcetype>(R.resType);
  D.flags = R.flags;
  switch (R.resType) {
  case cudaResourceTypeArray:
    D.res.array.hArray = R.res.array.array;
    return cudaSuccess;
  case cudaResourceTypeLinear:
    D.res.linear.devPtr = reinterpret_cast<CUdeviceptr>(R.res.linear.devPtr);
    D.res.linear.sizeInBytes = R.res.linear.sizeInBytes;
    return driverFormat(R.res.linear.desc, D.res.linear.format, D.res.linear.numChannels);
  case cudaResourceTypePitch2D:
    D.res.pitch2D.devPtr = reinterpret_cast<CUdeviceptr>(R.res.pitch2D.devPtr);
    D.res.pitch2D.width = R.res.pitch2D.width, D.res.pitch2D.height = R.res.pitch2D.height;
    D.res.pitch2D.pitchInBytes = R.res.pitch2D.pitchInBytes;
    return driverFormat(R.res.pitch2D.desc, D.res.pitch2D.format, D.res.pitch2D.numChannels);
  case cudaResourceTypeMipmappedArray:
    D.res.mipmap.hMipmappedArray = R.res.mipmap.mipmap;
    return cudaSuccess;
  default:
    return cudaErrorInvalidValue;
  }
}

/// What creating a texture or surface object (written to Out) first needs: its resource in the driver's terms,
/// with the runtime's context current.
cudaError_t objectResource(const void *Out, const cudaResourceDesc *Res, CUDA_RESOURCE_DESC &R) {
  if (!Out || !Res)
    return cudaErrorInvalidValue;
  if (cudaError_t E = ensureContext())
    return E;
  return driverResource(*Res, R);
}

} // namespace

cudaError_t ptxforge::runtime::createTextureObject(cudaTextureObject_t *Out, const cudaResourceDesc *Res,
                                                   const cudaTextureDesc *Tex, const cudaResourceViewDesc *View) {
  if (!Tex)
    return cudaErrorInvalidValue;
  CUDA_RESOURCE_DESC R;
  if (cudaError_t E = objectResource(Out, Res, R))
    return E;
  CUDA_TEXTURE_DESC T = {};
  for (int I = 0; I < 3; ++I)
    T.addressMode[I] = static_cast<CUaddress_mode>(Tex->addressMode[I]);
  T.filterMode = static_cast<CUfilter_mode>(Tex->filterMode);
  T.flags = (Tex->readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
            (Tex->normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) | (Tex->sRGB ? CU_TRSF_SRGB : 0);
  T.maxAnisotropy = Tex->maxAnisotropy;
  T.mipmapFilterMode = static_cast<CUfilter_mode>(Tex->mipmapFilterMode);
  T.mipmapLevelBias = Tex->mipmapLevelBias;
  T.minMipmapLevelClamp = Tex->minMipmapLevelClamp, T.maxMipmapLevelClamp = Tex->maxMipmapLevelClamp;
  std::copy(Tex->borderColor, Tex->borderColor + 4, T.borderColor);
  if (View)
    return cudaErrorNotSupported; // resource views: see cuTexObjectCreate
  return drv(cuTexObjectCreate(Out, &R, &T, nullptr));
}

cudaError_t ptxforge::runtime::createSurfaceObject(cudaSurfaceObject_t *Out, const cudaResourceDesc *Res) {
  CUDA_RESOURCE_DESC R;
  if (cudaError_t E = objectResource(Out, Res, R))
    return E;
  return drv(cuSurfObjectCreate(Out, &R));
}

cudaError_t ptxforge::runtime::objectResourceDesc(cudaResourceDesc *Out, unsigned long long Object, bool Surface) {
  CUDA_RESOURCE_DESC R;
  if (cudaError_t E = drv(Surface ? cuSurfObjectGetResourceDesc(&R, Object) : cuTexObjectGetResourceDesc(&R, Object)))
    return E;
  if (!Out)
    return cudaErrorInvalidValue;
  *Out = {};
  Out->resType = static_cast<cudaResourceType>(R.resType);
  switch (R.resType) {
  case CU_RESOURCE_TYPE_ARRAY:
    Out->res.array.array = R.res.array.hArray;
    break;
  case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
    Out->res.mipmap.mipmap = R.res.mipmap.hMipmappedArray;
    break;
  case CU_RESOURCE_TYPE_LINEAR:
    Out->res.linear.devPtr = reinterpret_cast<void *>(R.res.linear.devPtr);
    Out->res.linear.desc = channelDesc(R.res.linear.format, R.res.linear.numChannels);
    Out->res.linear.sizeInBytes = R.res.linear.sizeInBytes;
    break;
  default:
    Out->res.pitch2D.devPtr = reinterpret_cast<void *>(R.res.pitch2D.devPtr);
    Out->res.pitch2D.desc = channelDesc(R.res.pitch2D.format, R.res.pitch2D.numChannels);
    Out->res.pitch2D.width = R.res.pitch2D.width, Out->res.pitch2D.height = R.res.pitch2D.height;
    Out->res.pitch2D.pitchInBytes = R.res.pitch2D.pitchInBytes;
  }
  return cudaSuccess;
}

cudaError_t ptxforge::runtime::textureDesc(cudaTextureDesc *Out, cudaTextureObject_t Object) {
  CUDA_TEXTURE_DESC T;
  if (cudaError_t E = drv(cuTexObjectGetTextureDesc(&T, Object)))
    return E;
  if (!Out)
    return cudaErrorInvalidValue;
  *Out = {};
  for (int I = 0; I < 3; ++I)
    Out->addressMode[I] = static_cast<cudaTextureAddressMode>(T.addressMode[I]);
  Out->filterMode = static_cast<cudaTextureFilterMode>(T.filterMode);
  Out->readMode = T.flags & CU_TRSF_READ_AS_INTEGER ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
  Out->sRGB = (T.flags & CU_TRSF_SRGB) != 0;
  Out->normalizedCoords = (T.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  Out->maxAnisotropy = T.maxAnisotropy;
  Out->mipmapFilterMode = static_cast<cudaTextureFilterMode>(T.mipmapFilterMode);
  Out->mipmapLevelBias = T.mipmapLevelBias;
  Out->minMipmapLevelClamp = T.minMipmapLevelClamp, Out->maxMipmapLevelClamp = T.maxMipmapLevelClamp;
  std::copy(T.borderColor, T.borderColor + 4, Out->borderColor);
  return cudaSuccess;
}
