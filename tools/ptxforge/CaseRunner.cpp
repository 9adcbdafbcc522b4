// Runs cases in the conformance format of ../shared/conformance/FORMAT.md (case.json, buffers, launches,
// alt_ptx) through the whole pipeline and compares buffers by check_case.py's rules. Texture cases add CUDA
// arrays, texture objects and surface objects (`arrays`/`textures`/`surfaces`, tests/conformance/texture/
// README.md), built here as codegen texture descriptors, as the driver builds them from the CUDA API's.
#include "CaseRunner.h"

#include "ptxforge/codegen/Launch.h"
#include "ptxforge/codegen/Texture.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/TensorMap.h"
#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <set>

using json = nlohmann::json;
using namespace ptxforge;

namespace ptxforge::tools {
std::string readFile(const std::string &Path);
}

std::string ptxforge::tools::readFile(const std::string &Path) {
  auto Bytes = support::readInputFile(Path);
  if (!Bytes) {
    llvm::consumeError(Bytes.takeError()); // the callers treat what is missing or unreadable as empty
    return {};
  }
  return std::move(*Bytes);
}

namespace {
using ptxforge::tools::readFile;

struct Buffer {
  std::vector<char> Storage;
  char *Data = nullptr;
  size_t Size = 0;
};

unsigned typeSize(const std::string &T) {
  if (T == "u8" || T == "s8" || T == "b8")
    return 1;
  if (T == "u16" || T == "s16" || T == "b16" || T == "f16" || T == "bf16")
    return 2;
  if (T == "u32" || T == "s32" || T == "b32" || T == "f32")
    return 4;
  return 8;
}

struct FloatFormat {
  int Exp, Man;
};
bool floatFormat(const std::string &T, FloatFormat &F) {
  if (T == "f16")
    F = {5, 10};
  else if (T == "bf16")
    F = {8, 7};
  else if (T == "f32")
    F = {8, 23};
  else if (T == "f64")
    F = {11, 52};
  else
    return false;
  return true;
}

double decodeFloat(uint64_t Bits, const std::string &T) {
  if (T == "f32") {
    float F;
    uint32_t B = static_cast<uint32_t>(Bits);
    memcpy(&F, &B, 4);
    return F;
  }
  if (T == "f64") {
    double D;
    memcpy(&D, &Bits, 8);
    return D;
  }
  if (T == "bf16") {
    float F;
    uint32_t B = static_cast<uint32_t>(Bits) << 16;
    memcpy(&F, &B, 4);
    return F;
  }
  // f16
  int S = (Bits >> 15) & 1, E = (Bits >> 10) & 31, M = Bits & 1023;
  double V = E == 0 ? std::ldexp(M, -24) : E == 31 ? (M ? NAN : INFINITY) : std::ldexp(1024 + M, E - 25);
  return S ? -V : V;
}

bool elementOk(uint64_t E, uint64_t A, const std::string &T, const json &Cmp) {
  if (E == A)
    return true;
  bool HasUlp = Cmp.contains("max_ulp"), HasRel = Cmp.contains("rel_tol"), HasAbs = Cmp.contains("abs_tol");
  FloatFormat F;
  unsigned W = typeSize(T) * 8;
  if (floatFormat(T, F)) {
    auto isNaN = [&](uint64_t B) {
      uint64_t Exp = (B >> F.Man) & ((1ull << F.Exp) - 1);
      return Exp == (1ull << F.Exp) - 1 && (B & ((1ull << F.Man) - 1)) != 0;
    };
    auto isInf = [&](uint64_t B) {
      uint64_t Exp = (B >> F.Man) & ((1ull << F.Exp) - 1);
      return Exp == (1ull << F.Exp) - 1 && (B & ((1ull << F.Man) - 1)) == 0;
    };
    bool EN = isNaN(E), AN = isNaN(A);
    if (EN || AN)
      return EN && AN && !Cmp.value("nan_payload", false);
    if (!HasUlp && !HasRel && !HasAbs)
      return false;
    if (isInf(E) || isInf(A))
      return false;
    auto ordinal = [&](uint64_t B) -> long double {
      uint64_t Sign = 1ull << (W - 1);
      return (B & Sign) ? -static_cast<long double>(B & (Sign - 1)) : static_cast<long double>(B);
    };
    if (HasUlp && std::fabs(ordinal(E) - ordinal(A)) <= Cmp["max_ulp"].get<double>())
      return true;
    double EF = decodeFloat(E, T), AF = decodeFloat(A, T), D = std::fabs(EF - AF);
    if (HasAbs && D <= Cmp["abs_tol"].get<double>())
      return true;
    if (HasRel && D <= Cmp["rel_tol"].get<double>() * std::fabs(EF))
      return true;
    return false;
  }
  if (HasAbs) {
    double Tol = Cmp["abs_tol"].get<double>();
    if (T[0] == 's') {
      auto sx = [&](uint64_t V) {
        return W == 64 ? static_cast<int64_t>(V) : static_cast<int64_t>(V << (64 - W)) >> (64 - W);
      };
      return std::fabs(static_cast<long double>(sx(E)) - static_cast<long double>(sx(A))) <= Tol;
    }
    return std::fabs(static_cast<long double>(E) - static_cast<long double>(A)) <= Tol;
  }
  return false;
}

std::string compareBuffer(const std::string &Expect, const char *Actual, size_t Size, const json &Cmp) {
  std::string T = Cmp.value("as", "u8");
  if (Expect.size() != Size)
    return "size differs";
  unsigned S = typeSize(T);
  size_t N = Size / S;
  std::vector<uint64_t> E(N), A(N);
  for (size_t I = 0; I < N; ++I) {
    memcpy(&E[I], Expect.data() + I * S, S);
    memcpy(&A[I], Actual + I * S, S);
    if (S < 8) {
      E[I] &= (1ull << (S * 8)) - 1;
      A[I] &= (1ull << (S * 8)) - 1;
    }
  }
  if (Cmp.value("unordered", false)) {
    std::sort(E.begin(), E.end());
    std::sort(A.begin(), A.end());
  }
  size_t Bad = 0;
  std::string First;
  for (size_t I = 0; I < N; ++I)
    if (!elementOk(E[I], A[I], T, Cmp)) {
      if (Bad++ < 3) {
        char Buf[96];
        snprintf(Buf, sizeof Buf, " [%zu] exp %#llx got %#llx", I, (unsigned long long)E[I], (unsigned long long)A[I]);
        First += Buf;
      }
    }
  if (Bad <= Cmp.value("max_mismatches", 0u))
    return "";
  return std::to_string(Bad) + " mismatches:" + First;
}

/// Fills Size bytes at Data as a case's `init` says: a file of the case, "zero", or {"fill_byte": n}.
void initBytes(const std::string &Dir, const json &Init, char *Data, size_t Size) {
  if (Init.is_string() && Init != "zero") {
    std::string D = readFile(Dir + "/" + Init.get<std::string>());
    memcpy(Data, D.data(), std::min(D.size(), Size));
  } else if (Init.is_object() && Init.contains("fill_byte")) {
    memset(Data, Init["fill_byte"].get<int>(), Size);
  }
}

/// A case's `key` object, or an empty one.
const json &section(const json &C, const char *Key) {
  static const json Empty = json::object();
  return C.contains(Key) ? C[Key] : Empty;
}

bool texelFormat(const json &Name, codegen::TexelFormat &F) {
  static const std::map<std::string, codegen::TexelFormat> M = {
      {"u8", codegen::TexelFormat::U8},   {"s8", codegen::TexelFormat::S8},   {"u16", codegen::TexelFormat::U16},
      {"s16", codegen::TexelFormat::S16}, {"u32", codegen::TexelFormat::U32}, {"s32", codegen::TexelFormat::S32},
      {"f16", codegen::TexelFormat::F16}, {"f32", codegen::TexelFormat::F32}};
  auto It = Name.is_string() ? M.find(Name.get<std::string>()) : M.end();
  if (It == M.end())
    return false;
  F = It->second;
  return true;
}

/// The arrays, texture and surface objects of a texture case; releases the handles when done.
struct TextureResources {
  std::map<std::string, Buffer> Arrays;
  std::map<std::string, codegen::TextureDescriptor> Layouts; ///< per array: its resource part
  std::map<std::string, uint64_t> Handles;                   ///< textures and surfaces by name
  ~TextureResources() {
    for (auto &[Name, H] : Handles)
      codegen::releaseTextureObject(H);
  }
};

std::string makeArrays(const std::string &Dir, const json &C, TextureResources &R) {
  for (auto &[Name, A] : section(C, "arrays").items()) {
    codegen::TextureDescriptor D;
    if (!texelFormat(A["format"], D.Format))
      return "array " + Name + ": bad format";
    D.Channels = A.value("channels", 1u);
    uint64_t H = A.value("height", 0ull), Z = A.value("depth", 0ull);
    D.Width = A.value("width", 1ull), D.Height = std::max<uint64_t>(H, 1);
    D.Dims = Z && !A.value("layered", false) ? 3 : H ? 2 : 1;
    (A.value("layered", false) ? D.Layers : D.Depth) = std::max<uint64_t>(Z, 1);
    D.RowPitch = D.Width * D.texelBytes(), D.SlicePitch = D.RowPitch * D.Height;
    D.IsSurface = A.value("surface", false);
    Buffer &B = R.Arrays[Name];
    B.Size = D.SlicePitch * (D.Layers ? D.Layers : D.Depth);
    B.Storage.assign(B.Size + 256, 0);
    B.Data = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(B.Storage.data()) + 255) & ~uintptr_t(255));
    initBytes(Dir, A["init"], B.Data, B.Size);
    D.Data = B.Data;
    R.Layouts[Name] = D;
  }
  return "";
}

/// The resource part of a texture: an array, or (linear, pitch2d) a buffer described in place.
std::string textureResource(const json &Res, std::map<std::string, Buffer> &Buffers, TextureResources &R,
                            codegen::TextureDescriptor &D) {
  if (Res.contains("array")) {
    auto It = R.Layouts.find(Res["array"]);
    if (It == R.Layouts.end())
      return "unknown array";
    D = It->second;
    return "";
  }
  bool Linear = Res.contains("linear");
  auto It = Buffers.find(Res[Linear ? "linear" : "pitch2d"]);
  if (It == Buffers.end() || !texelFormat(Res["format"], D.Format))
    return "bad linear/pitch2d resource";
  D.Resource = Linear ? codegen::TexResource::Linear : codegen::TexResource::Pitch2D;
  D.Data = It->second.Data, D.Channels = Res.value("channels", 1u);
  D.Width = Linear ? Res.value("bytes", 0ull) / D.texelBytes() : Res.value("width", 1ull);
  D.Height = Linear ? 1 : Res.value("height", 1ull);
  D.Dims = Linear ? 1 : 2;
  D.RowPitch = Linear ? D.Width * D.texelBytes() : Res.value("pitch", 0ull);
  return "";
}

std::string makeObjects(const json &C, std::map<std::string, Buffer> &Buffers, TextureResources &R) {
  static const std::map<std::string, codegen::TexAddressMode> Modes = {{"wrap", codegen::TexAddressMode::Wrap},
                                                                       {"clamp", codegen::TexAddressMode::Clamp},
                                                                       {"mirror", codegen::TexAddressMode::Mirror},
                                                                       {"border", codegen::TexAddressMode::Border}};
  for (auto &[Name, T] : section(C, "textures").items()) {
    codegen::TextureDescriptor D;
    if (std::string E = textureResource(T["resource"], Buffers, R, D); !E.empty())
      return "texture " + Name + ": " + E;
    D.IsSurface = false;
    for (size_t I = 0; I < T["address"].size() && I < 3; ++I)
      D.Address[I] = Modes.at(T["address"][I].get<std::string>());
    D.Filter = T.value("filter", "point") == "linear" ? codegen::TexFilterMode::Linear : codegen::TexFilterMode::Point;
    D.NormalizedCoords = T.value("normalized_coords", false);
    D.ReadAsInteger = T.value("read", "element") == "element";
    if (T.contains("border"))
      for (unsigned I = 0; I < 4; ++I)
        D.BorderColor[I] = T["border"][I].get<float>();
    R.Handles[Name] = codegen::registerTextureObject(D);
  }
  for (auto &[Name, S] : section(C, "surfaces").items()) {
    auto It = R.Layouts.find(S["array"]);
    if (It == R.Layouts.end())
      return "surface " + Name + ": unknown array";
    R.Handles[Name] = codegen::registerTextureObject(It->second);
  }
  return "";
}

/// A wide im2col map ("mode": "im2col_wide"): the W corners, the column and the W/W128 mode beyond the common A.
bool encodeWideMap(codegen::TensorMap &Map, const json &M, const driver::TiledTensorMapArgs &A) {
  driver::Im2colWideTensorMapArgs I;
  I.Common = A;
  I.PixelBoxLowerCornerWidth = M.value("lower_corner_w", 0), I.PixelBoxUpperCornerWidth = M.value("upper_corner_w", 0);
  I.ChannelsPerPixel = M.value("channels_per_pixel", 0u), I.PixelsPerColumn = M.value("pixels_per_column", 0u);
  I.Mode = M.value("wide_mode", 0u);
  return driver::encodeIm2colWideTensorMap(&Map, I);
}

/// A "tensormap" parameter (cases/README.md): the map cuTensorMapEncodeTiled (or, with "mode": "im2col",
/// cuTensorMapEncodeIm2col; "im2col_wide", cuTensorMapEncodeIm2colWide) makes over a case buffer.
bool encodeTensorMap(std::vector<char> &Bytes, const json &M, std::map<std::string, Buffer> &Buffers,
                     std::string &Err) {
  auto It = Buffers.find(M.value("buffer", ""));
  if (It == Buffers.end()) {
    Err = "tensormap: unknown buffer";
    return false;
  }
  auto list = [&](const char *Key, auto Zero) {
    std::vector<decltype(Zero)> V;
    for (const json &E : M.value(Key, json::array()))
      V.push_back(E.get<decltype(Zero)>());
    V.resize(5, Zero);
    return V;
  };
  std::vector<uint64_t> Dims = list("global_dim", uint64_t(0)), Strides = list("global_strides", uint64_t(0));
  std::vector<uint32_t> Box = list("box_dim", uint32_t(0)), ElemStrides = list("element_strides", uint32_t(0));
  driver::TiledTensorMapArgs A;
  A.DataType = M.value("data_type", 0u);
  A.Rank = static_cast<uint32_t>(M.value("global_dim", json::array()).size());
  A.GlobalAddress = It->second.Data + M.value("offset", 0ull);
  A.GlobalDim = Dims.data(), A.GlobalStrides = Strides.data(), A.BoxDim = Box.data();
  A.ElementStrides = ElemStrides.data();
  A.Interleave = M.value("interleave", 0u), A.Swizzle = M.value("swizzle", 0u);
  A.L2Promotion = M.value("l2_promotion", 0u), A.OobFill = M.value("oob_fill", 0u);
  alignas(64) codegen::TensorMap Map;
  if (M.value("mode", "tiled") == "im2col_wide") {
    if (!encodeWideMap(Map, M, A)) {
      Err = "tensormap: cuTensorMapEncodeIm2colWide rejects its arguments";
      return false;
    }
  } else if (M.value("mode", "tiled") == "im2col") {
    std::vector<int> Lower = list("lower_corner", 0), Upper = list("upper_corner", 0);
    driver::Im2colTensorMapArgs I;
    I.Common = A;
    I.PixelBoxLowerCorner = Lower.data(), I.PixelBoxUpperCorner = Upper.data();
    I.ChannelsPerPixel = M.value("channels_per_pixel", 0u), I.PixelsPerColumn = M.value("pixels_per_column", 0u);
    if (!driver::encodeIm2colTensorMap(&Map, I)) {
      Err = "tensormap: cuTensorMapEncodeIm2col rejects its arguments";
      return false;
    }
  } else if (!driver::encodeTiledTensorMap(&Map, A)) {
    Err = "tensormap: cuTensorMapEncodeTiled rejects its arguments";
    return false;
  }
  const char *Raw = reinterpret_cast<const char *>(&Map);
  Bytes.insert(Bytes.end(), Raw, Raw + sizeof(Map));
  return true;
}

/// The bytes one case.json parameter passes (FORMAT.md "params").
bool encodeParam(std::vector<char> &Bytes, const json &P, std::map<std::string, Buffer> &Buffers,
                 const TextureResources &Tex, std::string &Err) {
  std::string T = P.value("type", "u32");
  if (T == "tensormap")
    return encodeTensorMap(Bytes, P["tensormap"], Buffers, Err);
  if (T == "bytes") {
    std::string Hex = P["hex"];
    for (size_t I = 0; I + 1 < Hex.size(); I += 2)
      Bytes.push_back(static_cast<char>(std::stoi(Hex.substr(I, 2), nullptr, 16)));
    return true;
  }
  unsigned S = typeSize(T);
  uint64_t Bits = 0;
  if (P.contains("buffer")) {
    auto It = Buffers.find(P["buffer"]);
    if (It == Buffers.end()) {
      Err = "unknown buffer";
      return false;
    }
    Bits = reinterpret_cast<uint64_t>(It->second.Data) + P.value("offset", 0ull);
  } else if (P.contains("texture") || P.contains("surface")) {
    auto It = Tex.Handles.find(P.contains("texture") ? P["texture"] : P["surface"]);
    if (It == Tex.Handles.end()) {
      Err = "unknown texture or surface";
      return false;
    }
    Bits = It->second;
  } else if (P.contains("bits")) {
    Bits = std::stoull(P["bits"].get<std::string>(), nullptr, 16);
  } else if (T == "f32") {
    float F = static_cast<float>(P["value"].get<double>());
    uint32_t B;
    memcpy(&B, &F, 4);
    Bits = B;
  } else if (T == "f64") {
    double D = P["value"].get<double>();
    memcpy(&Bits, &D, 8);
  } else if (P["value"].is_number_integer() && P["value"].get<long long>() < 0) {
    Bits = static_cast<uint64_t>(P["value"].get<long long>());
  } else {
    Bits = P["value"].get<uint64_t>();
  }
  for (unsigned I = 0; I < S; ++I)
    Bytes.push_back(static_cast<char>(Bits >> (8 * I)));
  return true;
}

/// Runs one case with one PTX file; returns an empty string on success.
std::string runCase(const std::string &Dir, const json &C, const std::string &PtxFile) {
  std::string Text = readFile(Dir + "/" + PtxFile);
  auto FR = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(PtxFile, Text));
  if (!FR->ok()) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    FR->Diags.print(*FR->Source, OS);
    return "front end: " + S.substr(0, 300);
  }
  auto CM = codegen::compilePTX(*FR->Verified, FR->Source.get(), driver::processSettings().Compile);
  if (!CM)
    return "compile: " + llvm::toString(CM.takeError()).substr(0, 400);
  std::map<std::string, Buffer> Buffers;
  for (auto &[Name, B] : C["buffers"].items()) {
    Buffer &Buf = Buffers[Name];
    Buf.Size = B["bytes"].get<size_t>();
    Buf.Storage.assign(Buf.Size + 512, 0);
    Buf.Data = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(Buf.Storage.data()) + 255) & ~uintptr_t(255));
    initBytes(Dir, B["init"], Buf.Data, Buf.Size);
  }
  TextureResources Tex;
  if (std::string E = makeArrays(Dir, C, Tex); !E.empty())
    return E;
  if (std::string E = makeObjects(C, Buffers, Tex); !E.empty())
    return E;
  json Launches = C.contains("launches") ? C["launches"] : json::array({C});
  for (const json &L : Launches) {
    const codegen::KernelInfo *K = (*CM)->kernel(L["entry"].get<std::string>());
    if (!K)
      return "no entry " + L["entry"].get<std::string>();
    // Each value goes to its parameter's offset in the kernel's own layout (the JSON lists them in order).
    std::vector<char> Params(std::max<uint64_t>(K->ParamBytes, 1), 0);
    size_t PI = 0;
    for (const json &P : L["params"]) {
      std::vector<char> Bytes;
      std::string Err;
      if (!encodeParam(Bytes, P, Buffers, Tex, Err))
        return Err;
      if (PI < K->Params.size() && K->Params[PI].Offset + Bytes.size() <= Params.size())
        memcpy(Params.data() + K->Params[PI].Offset, Bytes.data(), Bytes.size());
      ++PI;
    }
    codegen::LaunchConfig Cfg = driver::processSettings().launchConfig({});
    Cfg.Grid = {L["grid"][0], L["grid"][1], L["grid"][2]};
    Cfg.Block = {L["block"][0], L["block"][1], L["block"][2]};
    Cfg.DynamicSharedBytes = L.value("dynamic_shared_bytes", 0u);
    // The harness initializes every buffer (zero where a case says nothing), so initcheck has nothing to track.
    std::vector<codegen::MemcheckAllocation> Known;
    for (auto &[Name, B] : Buffers)
      Known.push_back({reinterpret_cast<uint64_t>(B.Data), B.Size, nullptr});
    codegen::MemcheckMemory Checked = tools::memcheckMemory(std::move(Known));
    if (Cfg.MemcheckFindings)
      Cfg.Memcheck = &Checked;
    llvm::Error E = codegen::launchKernel(**CM, *K, Cfg, Params.data());
    if (Cfg.MemcheckFindings)
      driver::printMemcheckFindings();
    if (E)
      return "launch: " + llvm::toString(std::move(E));
  }
  std::string Result;
  auto Compare = [&](const json &Spec, std::map<std::string, Buffer> &From) {
    for (auto &[Name, B] : Spec.items()) {
      if (!B.contains("expect"))
        continue;
      std::string Expect = readFile(Dir + "/" + B["expect"].get<std::string>());
      std::string R = compareBuffer(Expect, From[Name].Data, From[Name].Size,
                                    B.contains("compare") ? B["compare"] : json{{"as", "u8"}});
      if (!R.empty())
        Result += (Result.empty() ? "" : "; ") + Name + ": " + R;
    }
  };
  Compare(C["buffers"], Buffers);
  Compare(section(C, "arrays"), Tex.Arrays);
  return Result;
}

} // namespace

std::string ptxforge::tools::runCaseFile(const std::string &Dir, const std::string &PtxFile, double *Millis) {
  json C = json::parse(readFile(Dir + "/case.json"), nullptr, false);
  if (C.is_discarded())
    return "cannot read " + Dir + "/case.json";
  auto T0 = std::chrono::steady_clock::now();
  std::string R = runCase(Dir, C, PtxFile.empty() ? C.value("ptx", "kernel.ptx") : PtxFile);
  if (Millis)
    *Millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
  return R;
}

std::vector<ptxforge::tools::CaseFile> ptxforge::tools::listCaseFiles(const std::string &Dir) {
  std::vector<CaseFile> Out;
  json C = json::parse(readFile(Dir + "/case.json"), nullptr, false);
  if (C.is_discarded())
    return Out;
  std::string Name = C.value("name", Dir);
  Out.push_back({Dir, Name, C.value("ptx", "kernel.ptx"), C.value("min_sm", 0u)});
  if (C.contains("alt_ptx"))
    for (const json &F : C["alt_ptx"])
      Out.push_back({Dir, Name + "@" + F.get<std::string>(), F.get<std::string>(), C.value("min_sm", 0u)});
  return Out;
}

ptxforge::codegen::MemcheckMemory ptxforge::tools::memcheckMemory(std::vector<codegen::MemcheckAllocation> Buffers) {
  codegen::MemcheckMemory M;
  std::sort(Buffers.begin(), Buffers.end(), [](const auto &A, const auto &B) { return A.Base < B.Base; });
  M.Allocations = std::move(Buffers);
  return M;
}
