// codegen::CompiledObject, the payload of host-native fatbinary entries: the serialized form round-trips, cut or
// flipped bytes are errors (never a crash), an object runs its kernels after load(), and a CPU without the
// object's features is refused before anything is linked.
#include "HostNativeTestSupport.h"

#include "ptxforge/codegen/Launch.h"

#include "llvm/TargetParser/Host.h"

#include <cstring>

using namespace ptxforge;
using namespace ptxforge::codegen;
using namespace ptxforge::fatbin::test;

namespace {

void checkSame(const CompiledObject &A, const CompiledObject &B) {
  CHECK(A.ObjectCode == B.ObjectCode);
  CHECK(A.TargetTriple == B.TargetTriple);
  CHECK(A.TargetCpu == B.TargetCpu);
  CHECK(A.TargetFeatures == B.TargetFeatures);
  CHECK(A.OptLevel == B.OptLevel);
  REQUIRE(A.Kernels.size() == B.Kernels.size());
  for (size_t I = 0; I < A.Kernels.size(); ++I) {
    const KernelInfo &X = A.Kernels[I], &Y = B.Kernels[I];
    CHECK(X.Name == Y.Name);
    CHECK(X.Symbol == Y.Symbol);
    CHECK(X.BlockSymbol == Y.BlockSymbol);
    CHECK(X.ParamBytes == Y.ParamBytes);
    CHECK(X.StaticSharedBytes == Y.StaticSharedBytes);
    CHECK(X.Synchronizes == Y.Synchronizes);
    CHECK(X.ExitInCallee == Y.ExitInCallee);
    CHECK(std::memcmp(X.ReqNtid, Y.ReqNtid, sizeof X.ReqNtid) == 0);
    CHECK(std::memcmp(X.MaxNtid, Y.MaxNtid, sizeof X.MaxNtid) == 0);
    CHECK(std::memcmp(X.ReqClusterDim, Y.ReqClusterDim, sizeof X.ReqClusterDim) == 0);
    CHECK(X.MaxClusterRank == Y.MaxClusterRank);
    CHECK(X.ExplicitCluster == Y.ExplicitCluster);
    REQUIRE(X.Params.size() == Y.Params.size());
    for (size_t J = 0; J < X.Params.size(); ++J) {
      CHECK(X.Params[J].Name == Y.Params[J].Name);
      CHECK(X.Params[J].Offset == Y.Params[J].Offset);
      CHECK(X.Params[J].Size == Y.Params[J].Size);
      CHECK(X.Params[J].Align == Y.Params[J].Align);
    }
  }
  REQUIRE(A.Globals.size() == B.Globals.size());
  for (size_t I = 0; I < A.Globals.size(); ++I) {
    CHECK(A.Globals[I].Name == B.Globals[I].Name);
    CHECK(A.Globals[I].Symbol == B.Globals[I].Symbol);
    CHECK(A.Globals[I].Size == B.Globals[I].Size);
  }
  CHECK(A.Facts.TargetSm == B.Facts.TargetSm);
  CHECK(A.Facts.TargetSuffix == B.Facts.TargetSuffix);
  CHECK(A.Facts.PtxVersion == B.Facts.PtxVersion);
  REQUIRE(A.Facts.Kernels.size() == B.Facts.Kernels.size());
  for (size_t I = 0; I < A.Facts.Kernels.size(); ++I) {
    CHECK(A.Facts.Kernels[I].Name == B.Facts.Kernels[I].Name);
    CHECK(A.Facts.Kernels[I].LocalBytes == B.Facts.Kernels[I].LocalBytes);
    CHECK(A.Facts.Kernels[I].Registers == B.Facts.Kernels[I].Registers);
  }
  REQUIRE(A.Facts.Globals.size() == B.Facts.Globals.size());
  for (size_t I = 0; I < A.Facts.Globals.size(); ++I) {
    CHECK(A.Facts.Globals[I].Name == B.Facts.Globals[I].Name);
    CHECK(A.Facts.Globals[I].Const == B.Facts.Globals[I].Const);
  }
}

std::string deserializeError(llvm::StringRef Bytes) {
  auto O = CompiledObject::deserialize(Bytes);
  if (O)
    return "";
  return llvm::toString(O.takeError());
}

} // namespace

TEST_CASE("a compiled object describes its code, kernels, globals and PTX") {
  const CompiledObject &O = saxpyObject("x86-64-v2");
  CHECK(llvm::StringRef(O.ObjectCode)
            .starts_with("\x7f"
                         "ELF"));
  CHECK(O.TargetCpu == "x86-64-v2");
  CHECK(O.OptLevel == 2);
  REQUIRE(O.Kernels.size() == 2);
  CHECK(O.Kernels[0].Name == "saxpy");
  CHECK(O.Kernels[0].Params.size() == 4);
  CHECK(O.Kernels[0].ParamBytes == 24);
  CHECK(O.Facts.TargetSm == 80);
  CHECK(O.Facts.PtxVersion == 80);
  REQUIRE(O.Facts.Kernels.size() == 2);
  CHECK(O.Facts.kernel("saxpy") != nullptr);
  CHECK(O.Facts.kernel("saxpy")->Registers >= 1);
  std::vector<std::string> Needs = O.requiredFeatures();
  CHECK(std::find(Needs.begin(), Needs.end(), "sse4.2") != Needs.end()); // implied by x86-64-v2
  CHECK(std::find(Needs.begin(), Needs.end(), "avx2") == Needs.end());
}

TEST_CASE("serialize/deserialize round trip") {
  const CompiledObject &O = saxpyObject("x86-64-v2");
  std::string Bytes = O.serialize();
  CompiledObject Back = take(CompiledObject::deserialize(Bytes));
  checkSame(O, Back);
  CHECK(Back.serialize() == Bytes);

  // The host CPU's own object (features spelled out) round-trips too.
  const CompiledObject &Host = saxpyObject("host");
  CHECK_FALSE(Host.TargetFeatures.empty());
  checkSame(Host, take(CompiledObject::deserialize(Host.serialize())));
}

TEST_CASE("truncated, bit-flipped and foreign bytes are errors") {
  std::string Bytes = saxpyObject("x86-64-v2").serialize();
  // Every cut: in the header, inside any field, just before the end.
  for (size_t N = 0; N < Bytes.size(); N += (N < 64 ? 1 : 37)) {
    CAPTURE(N);
    CHECK_FALSE(deserializeError(llvm::StringRef(Bytes).take_front(N)).empty());
  }
  CHECK_FALSE(deserializeError(llvm::StringRef(Bytes).drop_back(1)).empty());
  CHECK_FALSE(deserializeError(Bytes + '\0').empty());
  // One flipped bit anywhere: the magic, the version, the sizes, the checksum or the payload.
  for (size_t I = 0; I < Bytes.size(); I += (I < 32 ? 1 : 53)) {
    for (int Bit : {0, 7}) {
      std::string Bad = Bytes;
      Bad[I] = static_cast<char>(Bad[I] ^ (1 << Bit));
      CAPTURE(I);
      CHECK_FALSE(deserializeError(Bad).empty());
    }
  }
  std::string Version = Bytes;
  Version[8] = static_cast<char>(Version[8] + 1);
  CHECK(llvm::StringRef(deserializeError(Version)).contains("format version"));
  std::string Flipped = Bytes;
  Flipped[Bytes.size() / 2] ^= 0x10;
  CHECK(llvm::StringRef(deserializeError(Flipped)).contains("checksum"));
  CHECK(llvm::StringRef(deserializeError("")).contains("header"));
  CHECK(llvm::StringRef(deserializeError(std::string(64, 'x'))).contains("magic"));
}

TEST_CASE("a loaded object runs its kernel") {
  CompiledObject O = take(CompiledObject::deserialize(saxpyObject("x86-64-v2").serialize()));
  std::unique_ptr<CompiledModule> M = take(CompiledModule::load(O));
  const KernelInfo *K = M->kernel("saxpy");
  REQUIRE(K != nullptr);
  constexpr uint32_t N = 1000;
  std::vector<float> X(N), Y(N);
  for (uint32_t I = 0; I < N; ++I) {
    X[I] = float(I);
    Y[I] = 1.0f;
  }
  std::vector<char> Params(K->ParamBytes);
  float *XP = X.data(), *YP = Y.data();
  float A = 3.0f;
  std::memcpy(Params.data() + K->Params[0].Offset, &XP, 8);
  std::memcpy(Params.data() + K->Params[1].Offset, &YP, 8);
  std::memcpy(Params.data() + K->Params[2].Offset, &A, 4);
  std::memcpy(Params.data() + K->Params[3].Offset, &N, 4);
  LaunchConfig C;
  C.Grid.X = (N + 127) / 128;
  C.Block.X = 128;
  REQUIRE_FALSE(bool(launchKernel(*M, *K, C, Params.data())));
  for (uint32_t I = 0; I < N; ++I) {
    CAPTURE(I);
    REQUIRE(Y[I] == 3.0f * float(I) + 1.0f);
  }
}

TEST_CASE("an object for features this CPU lacks, or another architecture, is refused before linking") {
  CompiledObject O = saxpyObject("x86-64-v2");
  CHECK(errorText(O.checkRunsOnHost()).empty());

  // A feature of some x86 CPUs that this one reports as absent.
  std::string Absent;
  llvm::StringMap<bool> Host = llvm::sys::getHostCPUFeatures();
  for (const char *F :
       {"amx-tile", "avx512fp16", "avx512vp2intersect", "sha512", "avxvnniint16", "avx512f", "avx2", "sse4.2"})
    if (Host.count(F) && !Host.lookup(F)) {
      Absent = F;
      break;
    }
  if (Absent.empty()) {
    MESSAGE("skipped the missing-feature check: this CPU reports every feature LLVM knows");
  } else {
    CompiledObject Needs = O;
    Needs.TargetFeatures = "+" + Absent;
    CHECK(llvm::StringRef(errorText(Needs.checkRunsOnHost())).contains(Absent));
    auto Loaded = CompiledModule::load(Needs);
    REQUIRE_FALSE(bool(Loaded));
    CHECK(llvm::StringRef(llvm::toString(Loaded.takeError())).contains("lacks"));
  }

  CompiledObject Arm = O;
  Arm.TargetTriple = "aarch64-unknown-linux-gnu";
  auto Loaded = CompiledModule::load(Arm);
  REQUIRE_FALSE(bool(Loaded));
  CHECK(llvm::StringRef(llvm::toString(Loaded.takeError())).contains("aarch64"));

  // A CPU name LLVM does not know is an error, not code for a generic CPU.
  CompileOptions Typo;
  Typo.TargetCpu = "x86-64-v5";
  auto TM = createTargetMachine(Typo);
  REQUIRE_FALSE(bool(TM));
  CHECK(llvm::StringRef(llvm::toString(TM.takeError())).contains("x86-64-v5"));
}
