// The C embedding API (ptxforge.h): a thin shell over the C++ API. Each function checks its pointers, unwraps
// the handles, calls the C++ API and turns an Error into a ptxforge_status plus the thread's last error; a
// catch-all keeps exceptions (none are expected) out of C callers.
#include "ptxforge/ptxforge.h"
#include "ptxforge/ptxforge.hpp"

#include <cstring>
#include <string>
#include <vector>

using namespace ptxforge;

struct ptxforge_program_s {
  Program P;
};
struct ptxforge_device_s {
  Device D;
};
struct ptxforge_executable_s {
  Executable X;
};
struct ptxforge_kernel_s {
  Kernel K;
};
struct ptxforge_stream_s {
  Stream S;
};
struct ptxforge_buffer_s {
  DeviceBuffer B;
};
struct ptxforge_object_s {
  ObjectCode O;
};

static_assert(PTXFORGE_ERROR_INTERNAL == static_cast<int>(ErrorCode::Internal) &&
                  PTXFORGE_ERROR_INVALID_PTX == static_cast<int>(ErrorCode::InvalidPtx) &&
                  PTXFORGE_ERROR_ILLEGAL_ADDRESS == static_cast<int>(ErrorCode::IllegalAddress),
              "ptxforge_status and ErrorCode share their numbers");

namespace {

struct LastError {
  std::string Message;
  std::vector<Diagnostic> Diags;
};
thread_local LastError Last;

ptxforge_status fail(const Error &E) {
  Last.Message = E.toString();
  Last.Diags = E.diagnostics();
  return static_cast<ptxforge_status>(E.code());
}

ptxforge_status fail(ErrorCode Code, const char *Message) { return fail(Error(Code, Message)); }

ptxforge_status nullArgument(const char *What) {
  return fail(ErrorCode::InvalidArgument, (std::string(What) + " is null").c_str());
}

/// Runs Fn (returning a ptxforge_status) behind the exception fence.
template <class F> ptxforge_status fence(F &&Fn) noexcept {
  try {
    return Fn();
  } catch (const std::exception &E) {
    return fail(ErrorCode::Internal, E.what());
  } catch (...) {
    return fail(ErrorCode::Internal, "unexpected exception");
  }
}

ptxforge_status check(const Expected<void> &R) { return R ? PTXFORGE_SUCCESS : fail(R.error()); }

/// Stores a new handle holding R's value in *Out.
template <class Handle, class T> ptxforge_status create(Expected<T> R, Handle **Out) {
  if (!R)
    return fail(R.error());
  *Out = new Handle{std::move(*R)};
  return PTXFORGE_SUCCESS;
}

void toC(const Diagnostic &D, ptxforge_diagnostic *Out) {
  Out->file = D.File.c_str();
  Out->line = D.Line;
  Out->column = D.Column;
  Out->severity = static_cast<ptxforge_severity>(D.Level);
  Out->message = D.Message.c_str();
  Out->source_line = D.SourceLine.c_str();
}

ptxforge_status diagnosticAt(const std::vector<Diagnostic> &Diags, size_t Index, ptxforge_diagnostic *Out) {
  if (!Out)
    return nullArgument("out");
  if (Index >= Diags.size())
    return fail(ErrorCode::InvalidArgument, "diagnostic index out of range");
  toC(Diags[Index], Out);
  return PTXFORGE_SUCCESS;
}

Expected<Arguments> toArguments(const void *const *Args, const size_t *Sizes, size_t N) {
  if (N && (!Args || !Sizes))
    return Error(ErrorCode::InvalidArgument, "args or arg_sizes is null");
  Arguments A;
  for (size_t I = 0; I < N; ++I) {
    if (!Args[I])
      return Error(ErrorCode::InvalidArgument, "args[" + std::to_string(I) + "] is null");
    A.addBytes(Args[I], Sizes[I]);
  }
  return A;
}

/// Copies Bytes to Buffer when it holds *Size bytes; *Size becomes the size needed either way.
ptxforge_status copyOut(const void *Bytes, size_t N, void *Buffer, size_t *Size) {
  if (!Size)
    return nullArgument("size");
  size_t Room = *Size;
  *Size = N;
  if (!Buffer || Room < N)
    return fail(ErrorCode::InvalidArgument, ("the buffer needs " + std::to_string(N) + " bytes").c_str());
  std::memcpy(Buffer, Bytes, N);
  return PTXFORGE_SUCCESS;
}

Expected<LaunchConfig> toConfig(const ptxforge_launch_config *C) {
  if (!C)
    return Error(ErrorCode::InvalidArgument, "config is null");
  LaunchConfig L;
  L.Grid = {C->grid[0], C->grid[1], C->grid[2]};
  L.Block = {C->block[0], C->block[1], C->block[2]};
  L.DynamicSharedBytes = C->dynamic_shared_bytes;
  return L;
}

} // namespace

extern "C" {

const char *ptxforge_version(void) { return ptxforge::version(); }
unsigned ptxforge_version_number(void) { return PTXFORGE_VERSION_NUMBER; }
const char *ptxforge_status_string(ptxforge_status S) { return describe(static_cast<ErrorCode>(S)); }
const char *ptxforge_last_error_message(void) { return Last.Message.c_str(); }
size_t ptxforge_last_error_diagnostic_count(void) { return Last.Diags.size(); }
ptxforge_status ptxforge_last_error_diagnostic(size_t Index, ptxforge_diagnostic *Out) {
  return diagnosticAt(Last.Diags, Index, Out);
}

ptxforge_status ptxforge_program_create(const char *Ptx, size_t Size, const char *Name, ptxforge_program *Out) {
  return fence([&] {
    if (!Ptx || !Out)
      return nullArgument(!Ptx ? "ptx" : "out");
    return create(Program::fromText(std::string(Ptx, Size), Name ? Name : "<memory>"), Out);
  });
}

ptxforge_status ptxforge_program_create_from_file(const char *Path, ptxforge_program *Out) {
  return fence([&] {
    if (!Path || !Out)
      return nullArgument(!Path ? "path" : "out");
    return create(Program::fromFile(Path), Out);
  });
}

void ptxforge_program_destroy(ptxforge_program P) { delete P; }

size_t ptxforge_program_diagnostic_count(ptxforge_program P) { return P ? P->P.diagnostics().size() : 0; }

ptxforge_status ptxforge_program_diagnostic(ptxforge_program P, size_t Index, ptxforge_diagnostic *Out) {
  if (!P)
    return nullArgument("program");
  return diagnosticAt(P->P.diagnostics(), Index, Out);
}

ptxforge_status ptxforge_program_requirements(ptxforge_program P, unsigned *MinSm, unsigned *MinPtx) {
  return fence([&] {
    if (!P)
      return nullArgument("program");
    Requirements R = P->P.requirements();
    if (MinSm)
      *MinSm = R.MinSm;
    if (MinPtx)
      *MinPtx = R.MinPtx;
    return PTXFORGE_SUCCESS;
  });
}

ptxforge_status ptxforge_program_check_target(ptxforge_program P, unsigned Major, unsigned Minor) {
  return fence([&] {
    if (!P)
      return nullArgument("program");
    ComputeCapability CC{Major, Minor};
    std::vector<Diagnostic> Reasons = P->P.checkTarget(CC);
    if (Reasons.empty())
      return PTXFORGE_SUCCESS;
    return fail(Error(ErrorCode::UnsupportedTarget, P->P.name() + " cannot run on " + CC.name(), Reasons));
  });
}

void ptxforge_device_options_init(ptxforge_device_options *O) {
  if (O)
    *O = ptxforge_device_options{0, 0, 0};
}

void ptxforge_compile_options_init(ptxforge_compile_options *O) {
  if (O)
    *O = ptxforge_compile_options{0, 0, 2};
}

ptxforge_status ptxforge_device_create(const ptxforge_device_options *O, ptxforge_device *Out) {
  return fence([&] {
    if (!Out)
      return nullArgument("out");
    DeviceOptions DO;
    if (O && (O->cc_major || O->cc_minor))
      DO.CC = ComputeCapability{O->cc_major, O->cc_minor};
    if (O)
      DO.Workers = O->workers;
    return create(Device::create(DO), Out);
  });
}

void ptxforge_device_destroy(ptxforge_device D) {
  if (!D)
    return;
  D->D.synchronize();
  delete D;
}

ptxforge_status ptxforge_device_compile(ptxforge_device D, ptxforge_program P, const ptxforge_compile_options *O,
                                        ptxforge_executable *Out) {
  return fence([&] {
    if (!D || !P || !Out)
      return nullArgument(!D ? "device" : !P ? "program" : "out");
    CompileOptions CO;
    if (O && (O->cc_major || O->cc_minor))
      CO.Target = ComputeCapability{O->cc_major, O->cc_minor};
    if (O)
      CO.OptLevel = O->opt_level;
    return create(D->D.compile(P->P, CO), Out);
  });
}

ptxforge_status ptxforge_device_synchronize(ptxforge_device D) {
  return fence([&] {
    if (!D)
      return nullArgument("device");
    D->D.synchronize();
    return PTXFORGE_SUCCESS;
  });
}

ptxforge_status ptxforge_device_copy_to_device(ptxforge_device D, uint64_t Dst, const void *Src, size_t Size) {
  return fence([&] { return D ? check(D->D.copyToDevice(Dst, Src, Size)) : nullArgument("device"); });
}

ptxforge_status ptxforge_device_copy_to_host(ptxforge_device D, void *Dst, uint64_t Src, size_t Size) {
  return fence([&] { return D ? check(D->D.copyToHost(Dst, Src, Size)) : nullArgument("device"); });
}

ptxforge_status ptxforge_object_compile(ptxforge_program P, const ptxforge_object_options *O, ptxforge_object *Out) {
  return fence([&] {
    if (!P || !O || !Out)
      return nullArgument(!P ? "program" : !O ? "options" : "out");
    ObjectOptions OO;
    OO.Target = ComputeCapability{O->cc_major, O->cc_minor};
    OO.OptLevel = O->opt_level;
    OO.Cpu = O->cpu ? O->cpu : "";
    return create(ObjectCode::compile(P->P, OO), Out);
  });
}

void ptxforge_object_destroy(ptxforge_object O) { delete O; }
const char *ptxforge_object_cpu(ptxforge_object O) { return O ? O->O.cpu().c_str() : ""; }

ptxforge_status ptxforge_object_serialize(ptxforge_object O, void *Buffer, size_t *Size) {
  return fence([&] {
    if (!O)
      return nullArgument("object");
    std::string Bytes = O->O.serialize();
    return copyOut(Bytes.data(), Bytes.size(), Buffer, Size);
  });
}

ptxforge_status ptxforge_object_fatbinary(ptxforge_object O, void *Buffer, size_t *Size) {
  return fence([&] {
    if (!O)
      return nullArgument("object");
    Expected<std::vector<uint8_t>> Bytes = O->O.fatbinary();
    return Bytes ? copyOut(Bytes->data(), Bytes->size(), Buffer, Size) : fail(Bytes.error());
  });
}

ptxforge_status ptxforge_device_load(ptxforge_device D, ptxforge_object O, ptxforge_executable *Out) {
  return fence([&] {
    if (!D || !O || !Out)
      return nullArgument(!D ? "device" : !O ? "object" : "out");
    return create(D->D.load(O->O), Out);
  });
}

void ptxforge_executable_destroy(ptxforge_executable X) { delete X; }

size_t ptxforge_executable_kernel_count(ptxforge_executable X) { return X ? X->X.kernels().size() : 0; }

ptxforge_status ptxforge_executable_kernel_at(ptxforge_executable X, size_t Index, ptxforge_kernel *Out) {
  return fence([&] {
    if (!X || !Out)
      return nullArgument(!X ? "executable" : "out");
    std::vector<Kernel> Ks = X->X.kernels();
    if (Index >= Ks.size())
      return fail(ErrorCode::InvalidArgument, "kernel index out of range");
    *Out = new ptxforge_kernel_s{Ks[Index]};
    return PTXFORGE_SUCCESS;
  });
}

ptxforge_status ptxforge_executable_kernel(ptxforge_executable X, const char *Name, ptxforge_kernel *Out) {
  return fence([&] {
    if (!X || !Name || !Out)
      return nullArgument(!X ? "executable" : !Name ? "name" : "out");
    return create(X->X.kernel(Name), Out);
  });
}

ptxforge_status ptxforge_executable_global(ptxforge_executable X, const char *Name, uint64_t *Address, size_t *Size) {
  return fence([&] {
    if (!X || !Name)
      return nullArgument(!X ? "executable" : "name");
    Expected<GlobalVariable> G = X->X.global(Name);
    if (!G)
      return fail(G.error());
    if (Address)
      *Address = G->Address;
    if (Size)
      *Size = G->Size;
    return PTXFORGE_SUCCESS;
  });
}

void ptxforge_kernel_destroy(ptxforge_kernel K) { delete K; }
const char *ptxforge_kernel_name(ptxforge_kernel K) { return K ? K->K.name().c_str() : ""; }
size_t ptxforge_kernel_param_count(ptxforge_kernel K) { return K ? K->K.parameters().size() : 0; }

ptxforge_status ptxforge_kernel_param(ptxforge_kernel K, size_t Index, ptxforge_param_info *Out) {
  if (!K || !Out)
    return nullArgument(!K ? "kernel" : "out");
  const std::vector<Parameter> &Ps = K->K.parameters();
  if (Index >= Ps.size())
    return fail(ErrorCode::InvalidArgument, "parameter index out of range");
  const Parameter &P = Ps[Index];
  *Out = ptxforge_param_info{P.Name.c_str(),         P.Type.c_str(), P.VectorWidth, P.ArrayLength, P.IsPointer ? 1 : 0,
                             P.PointerSpace.c_str(), P.Offset,       P.Size,        P.Align};
  return PTXFORGE_SUCCESS;
}

ptxforge_status ptxforge_kernel_run(ptxforge_kernel K, const ptxforge_launch_config *Config, const void *const *Args,
                                    const size_t *Sizes, size_t N) {
  return fence([&] {
    if (!K)
      return nullArgument("kernel");
    Expected<LaunchConfig> C = toConfig(Config);
    Expected<Arguments> A = toArguments(Args, Sizes, N);
    if (!C || !A)
      return fail(!C ? C.error() : A.error());
    return check(K->K.run(*C, *A));
  });
}

ptxforge_status ptxforge_stream_create(ptxforge_device D, ptxforge_stream *Out) {
  return fence([&] {
    if (!D || !Out)
      return nullArgument(!D ? "device" : "out");
    return create(D->D.createStream(), Out);
  });
}

void ptxforge_stream_destroy(ptxforge_stream S) { delete S; }

ptxforge_status ptxforge_stream_launch(ptxforge_stream S, ptxforge_kernel K, const ptxforge_launch_config *Config,
                                       const void *const *Args, const size_t *Sizes, size_t N) {
  return fence([&] {
    if (!S || !K)
      return nullArgument(!S ? "stream" : "kernel");
    Expected<LaunchConfig> C = toConfig(Config);
    Expected<Arguments> A = toArguments(Args, Sizes, N);
    if (!C || !A)
      return fail(!C ? C.error() : A.error());
    return check(S->S.launch(K->K, *C, *A));
  });
}

ptxforge_status ptxforge_stream_synchronize(ptxforge_stream S) {
  return fence([&] { return S ? check(S->S.synchronize()) : nullArgument("stream"); });
}

ptxforge_status ptxforge_buffer_create(ptxforge_device D, size_t Size, ptxforge_buffer *Out) {
  return fence([&] {
    if (!D || !Out)
      return nullArgument(!D ? "device" : "out");
    return create(D->D.allocate(Size), Out);
  });
}

void ptxforge_buffer_destroy(ptxforge_buffer B) { delete B; }
uint64_t ptxforge_buffer_address(ptxforge_buffer B) { return B ? B->B.address() : 0; }
size_t ptxforge_buffer_size(ptxforge_buffer B) { return B ? B->B.size() : 0; }

ptxforge_status ptxforge_buffer_write(ptxforge_buffer B, size_t Offset, const void *Src, size_t Size) {
  return fence([&] { return B ? check(B->B.write(Src, Size, Offset)) : nullArgument("buffer"); });
}

ptxforge_status ptxforge_buffer_read(ptxforge_buffer B, size_t Offset, void *Dst, size_t Size) {
  return fence([&] { return B ? check(B->B.read(Dst, Size, Offset)) : nullArgument("buffer"); });
}

ptxforge_status ptxforge_buffer_fill(ptxforge_buffer B, uint8_t Value) {
  return fence([&] { return B ? check(B->B.fill(Value)) : nullArgument("buffer"); });
}

ptxforge_status ptxforge_cache_configure(const ptxforge_cache_config *Config) {
  return fence([&] {
    if (!Config)
      return nullArgument("config");
    CacheConfig C{Config->directory ? Config->directory : "", Config->max_bytes, Config->enabled != 0};
    return check(ComputeCache::global().configure(C));
  });
}

ptxforge_status ptxforge_cache_get_stats(ptxforge_cache_stats *Out) {
  return fence([&] {
    if (!Out)
      return nullArgument("out");
    CacheStats S = ComputeCache::global().stats();
    *Out = ptxforge_cache_stats{S.Entries, S.Bytes, S.Hits, S.Misses, S.Stores, S.Evictions, S.Corrupt};
    return PTXFORGE_SUCCESS;
  });
}

ptxforge_status ptxforge_cache_clear(void) {
  return fence([&] { return check(ComputeCache::global().clear()); });
}

} // extern "C"
