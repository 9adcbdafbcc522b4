#include "ptxforge/runtime/Copy.h"

#include "ptxforge/runtime/Errors.h"
#include "ptxforge/runtime/Registry.h"
#include "ptxforge/runtime/RuntimeContext.h"

namespace ptxforge::runtime {

namespace {
cudaError_t drv(CUresult R) { return fromDriver(R); }
CUdeviceptr dptr(const void *P) { return reinterpret_cast<CUdeviceptr>(P); }

bool validKind(int Kind) { return Kind >= cudaMemcpyHostToHost && Kind <= cudaMemcpyDefault; }

} // namespace

/// A linear copy of Count bytes in the direction Kind, on Stream when Async.
cudaError_t copy(void *Dst, const void *Src, size_t Count, int Kind, bool Async, cudaStream_t Stream) {
  if (!validKind(Kind))
    return cudaErrorInvalidMemcpyDirection;
  if (cudaError_t E = ensureContext())
    return E;
  if (Count == 0)
    return cudaSuccess;
  if (!Dst || !Src)
    return cudaErrorInvalidValue;
  switch (Kind) {
  case cudaMemcpyHostToDevice:
    return drv(Async ? cuMemcpyHtoDAsync(dptr(Dst), Src, Count, Stream) : cuMemcpyHtoD(dptr(Dst), Src, Count));
  case cudaMemcpyDeviceToHost:
    return drv(Async ? cuMemcpyDtoHAsync(Dst, dptr(Src), Count, Stream) : cuMemcpyDtoH(Dst, dptr(Src), Count));
  case cudaMemcpyDeviceToDevice:
    return drv(Async ? cuMemcpyDtoDAsync(dptr(Dst), dptr(Src), Count, Stream)
                     : cuMemcpyDtoD(dptr(Dst), dptr(Src), Count));
  default: // host to host and cudaMemcpyDefault: the driver tells host from device memory (unified addressing)
    return drv(Async ? cuMemcpyAsync(dptr(Dst), dptr(Src), Count, Stream) : cuMemcpy(dptr(Dst), dptr(Src), Count));
  }
}

/// A 2-D copy: Height rows of Width bytes.
cudaError_t copy2D(void *Dst, size_t DPitch, const void *Src, size_t SPitch, size_t Width, size_t Height, int Kind,
                   bool Async, cudaStream_t Stream) {
  if (!validKind(Kind))
    return cudaErrorInvalidMemcpyDirection;
  if (cudaError_t E = ensureContext())
    return E;
  if (Width == 0 || Height == 0)
    return cudaSuccess;
  if (Width > DPitch || Width > SPitch)
    return cudaErrorInvalidPitchValue;
  auto Type = [&](bool IsDst) {
    bool Device = IsDst ? (Kind == cudaMemcpyHostToDevice || Kind == cudaMemcpyDeviceToDevice)
                        : (Kind == cudaMemcpyDeviceToHost || Kind == cudaMemcpyDeviceToDevice);
    if (Kind == cudaMemcpyDefault)
      return CU_MEMORYTYPE_UNIFIED;
    return Device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  };
  CUDA_MEMCPY2D C = {};
  C.srcMemoryType = Type(false);
  C.dstMemoryType = Type(true);
  C.srcHost = Src;
  C.srcDevice = dptr(Src);
  C.srcPitch = SPitch;
  C.dstHost = Dst;
  C.dstDevice = dptr(Dst);
  C.dstPitch = DPitch;
  C.WidthInBytes = Width;
  C.Height = Height;
  return drv(Async ? cuMemcpy2DAsync(&C, Stream) : cuMemcpy2D(&C));
}

/// A registered variable's device range [Address + Offset, + Count), checked against its size.
static cudaError_t symbolRange(const void *Symbol, size_t Count, size_t Offset, CUdeviceptr *Address) {
  size_t Size = 0;
  if (cudaError_t E = FatbinRegistry::get().variable(Symbol, Address, &Size))
    return E;
  if (Offset > Size || Count > Size - Offset)
    return cudaErrorInvalidValue;
  *Address += Offset;
  return cudaSuccess;
}

/// To or from a symbol: the device side is the symbol's range, the other side what Kind says.
cudaError_t symbolCopy(bool ToSymbol, void *Other, const void *Symbol, size_t Count, size_t Offset, int Kind,
                       bool Async, cudaStream_t Stream) {
  bool OtherIsDevice = Kind == cudaMemcpyDeviceToDevice;
  if (Kind != cudaMemcpyDefault && Kind != cudaMemcpyDeviceToDevice &&
      Kind != (ToSymbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
    return cudaErrorInvalidMemcpyDirection;
  CUdeviceptr Address = 0;
  if (cudaError_t E = symbolRange(Symbol, Count, Offset, &Address))
    return E;
  void *SymbolPtr = reinterpret_cast<void *>(Address);
  int Direction = Kind == cudaMemcpyDefault ? cudaMemcpyDefault
                  : OtherIsDevice           ? cudaMemcpyDeviceToDevice
                  : ToSymbol                ? cudaMemcpyHostToDevice
                                            : cudaMemcpyDeviceToHost;
  return ToSymbol ? copy(SymbolPtr, Other, Count, Direction, Async, Stream)
                  : copy(Other, SymbolPtr, Count, Direction, Async, Stream);
}
} // namespace ptxforge::runtime
