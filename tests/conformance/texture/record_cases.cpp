// Records the expect files of this folder's cases on an NVIDIA GPU: reads index.json and each case.json (the
// format of ../shared/conformance/FORMAT.md plus the `arrays`/`textures`/`surfaces` keys of README.md), builds
// the buffers, CUDA arrays, texture and surface objects with the driver API, launches, and writes each
// `expect` file under OUTDIR/<case dir>/.
//   g++ -std=c++17 -O1 record_cases.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda
//   ./a.out CASES_DIR OUTDIR
#include <cuda.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

using json = nlohmann::json;

#define CK(X)                                                                                                          \
  do {                                                                                                                 \
    CUresult R_ = (X);                                                                                                 \
    if (R_ != CUDA_SUCCESS) {                                                                                          \
      const char *S_ = "";                                                                                             \
      cuGetErrorName(R_, &S_);                                                                                         \
      fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #X, S_);                                                \
      throw 1;                                                                                                         \
    }                                                                                                                  \
  } while (0)

static std::string readFile(const std::string &P) {
  std::ifstream F(P, std::ios::binary);
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

static void writeFile(const std::string &P, const void *D, size_t N) {
  FILE *F = fopen(P.c_str(), "wb");
  fwrite(D, 1, N, F);
  fclose(F);
}

static CUarray_format format(const std::string &F, unsigned &Bytes) {
  static const std::map<std::string, std::pair<CUarray_format, unsigned>> M = {
      {"u8", {CU_AD_FORMAT_UNSIGNED_INT8, 1}},   {"s8", {CU_AD_FORMAT_SIGNED_INT8, 1}},
      {"u16", {CU_AD_FORMAT_UNSIGNED_INT16, 2}}, {"s16", {CU_AD_FORMAT_SIGNED_INT16, 2}},
      {"u32", {CU_AD_FORMAT_UNSIGNED_INT32, 4}}, {"s32", {CU_AD_FORMAT_SIGNED_INT32, 4}},
      {"f16", {CU_AD_FORMAT_HALF, 2}},           {"f32", {CU_AD_FORMAT_FLOAT, 4}}};
  Bytes = M.at(F).second;
  return M.at(F).first;
}

static CUaddress_mode addressMode(const std::string &M) {
  if (M == "wrap")
    return CU_TR_ADDRESS_MODE_WRAP;
  if (M == "clamp")
    return CU_TR_ADDRESS_MODE_CLAMP;
  if (M == "mirror")
    return CU_TR_ADDRESS_MODE_MIRROR;
  return CU_TR_ADDRESS_MODE_BORDER;
}

static const json &section(const json &C, const char *Key) {
  static const json Empty = json::object();
  return C.contains(Key) ? C[Key] : Empty;
}

struct Array {
  CUarray A;
  size_t RowBytes, Rows, Slices;
};

static std::vector<char> initBytes(const std::string &Dir, const json &Init, size_t N) {
  std::vector<char> D(N, 0);
  if (Init.is_string() && Init != "zero") {
    std::string S = readFile(Dir + "/" + Init.get<std::string>());
    memcpy(D.data(), S.data(), std::min(N, S.size()));
  } else if (Init.is_object()) {
    memset(D.data(), Init["fill_byte"].get<int>(), N);
  }
  return D;
}

static void copyArray(Array &A, void *Host, bool ToArray) {
  CUDA_MEMCPY3D C = {};
  C.WidthInBytes = A.RowBytes, C.Height = A.Rows, C.Depth = A.Slices;
  if (ToArray) {
    C.srcMemoryType = CU_MEMORYTYPE_HOST, C.srcHost = Host, C.srcPitch = A.RowBytes, C.srcHeight = A.Rows;
    C.dstMemoryType = CU_MEMORYTYPE_ARRAY, C.dstArray = A.A;
  } else {
    C.dstMemoryType = CU_MEMORYTYPE_HOST, C.dstHost = Host, C.dstPitch = A.RowBytes, C.dstHeight = A.Rows;
    C.srcMemoryType = CU_MEMORYTYPE_ARRAY, C.srcArray = A.A;
  }
  CK(cuMemcpy3D(&C));
}

static void runCase(const std::string &Dir, const std::string &Out) {
  json C = json::parse(readFile(Dir + "/case.json"));
  std::string Ptx = readFile(Dir + "/" + C["ptx"].get<std::string>());
  CUmodule M;
  static char Log[8192];
  CUjit_option O[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *V[] = {Log, reinterpret_cast<void *>(sizeof Log)};
  if (cuModuleLoadDataEx(&M, Ptx.c_str(), 2, O, V) != CUDA_SUCCESS) {
    fprintf(stderr, "%s\n", Log);
    throw 1;
  }
  std::map<std::string, CUdeviceptr> Bufs;
  for (auto &[Name, B] : C["buffers"].items()) {
    size_t N = B["bytes"];
    CK(cuMemAlloc(&Bufs[Name], N));
    std::vector<char> D = initBytes(Dir, B["init"], N);
    CK(cuMemcpyHtoD(Bufs[Name], D.data(), N));
  }
  std::map<std::string, Array> Arrays;
  for (auto &[Name, A] : section(C, "arrays").items()) {
    CUDA_ARRAY3D_DESCRIPTOR D = {};
    unsigned EB;
    D.Format = format(A["format"], EB);
    D.NumChannels = A["channels"];
    D.Width = A["width"], D.Height = A.value("height", 0), D.Depth = A.value("depth", 0);
    D.Flags = (A.value("layered", false) ? CUDA_ARRAY3D_LAYERED : 0) |
              (A.value("surface", false) ? CUDA_ARRAY3D_SURFACE_LDST : 0);
    Array &R = Arrays[Name];
    CK(cuArray3DCreate(&R.A, &D));
    R.RowBytes = D.Width * EB * D.NumChannels, R.Rows = D.Height ? D.Height : 1, R.Slices = D.Depth ? D.Depth : 1;
    std::vector<char> Init = initBytes(Dir, A["init"], R.RowBytes * R.Rows * R.Slices);
    copyArray(R, Init.data(), true);
  }
  std::map<std::string, CUtexObject> Texs;
  for (auto &[Name, T] : section(C, "textures").items()) {
    CUDA_RESOURCE_DESC RD = {};
    const json &Res = T["resource"];
    if (Res.contains("array")) {
      RD.resType = CU_RESOURCE_TYPE_ARRAY, RD.res.array.hArray = Arrays.at(Res["array"]).A;
    } else if (Res.contains("linear")) {
      unsigned EB;
      RD.resType = CU_RESOURCE_TYPE_LINEAR, RD.res.linear.devPtr = Bufs.at(Res["linear"]);
      RD.res.linear.format = format(Res["format"], EB), RD.res.linear.numChannels = Res["channels"];
      RD.res.linear.sizeInBytes = Res["bytes"];
    } else {
      unsigned EB;
      RD.resType = CU_RESOURCE_TYPE_PITCH2D, RD.res.pitch2D.devPtr = Bufs.at(Res["pitch2d"]);
      RD.res.pitch2D.format = format(Res["format"], EB), RD.res.pitch2D.numChannels = Res["channels"];
      RD.res.pitch2D.width = Res["width"], RD.res.pitch2D.height = Res["height"];
      RD.res.pitch2D.pitchInBytes = Res["pitch"];
    }
    CUDA_TEXTURE_DESC TD = {};
    for (size_t I = 0; I < T["address"].size(); ++I)
      TD.addressMode[I] = addressMode(T["address"][I]);
    TD.filterMode = T["filter"] == "linear" ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    TD.flags = (T["normalized_coords"].get<bool>() ? CU_TRSF_NORMALIZED_COORDINATES : 0) |
               (T["read"] == "element" ? CU_TRSF_READ_AS_INTEGER : 0);
    if (T.contains("border"))
      for (int I = 0; I < 4; ++I)
        TD.borderColor[I] = T["border"][I];
    CK(cuTexObjectCreate(&Texs[Name], &RD, &TD, nullptr));
  }
  std::map<std::string, CUsurfObject> Surfs;
  for (auto &[Name, S] : section(C, "surfaces").items()) {
    CUDA_RESOURCE_DESC RD = {};
    RD.resType = CU_RESOURCE_TYPE_ARRAY, RD.res.array.hArray = Arrays.at(S["array"]).A;
    CK(cuSurfObjectCreate(&Surfs[Name], &RD));
  }
  json Launches = C.contains("launches") ? C["launches"] : json::array({C});
  for (const json &L : Launches) {
    CUfunction F;
    if (cuModuleGetFunction(&F, M, L["entry"].get<std::string>().c_str()) != CUDA_SUCCESS) {
      fprintf(stderr, "the GPU's JIT gives no %s\n", L["entry"].get<std::string>().c_str());
      throw 1;
    }
    std::vector<uint64_t> Values;
    for (const json &P : L["params"]) {
      uint64_t V = 0;
      if (P.contains("buffer"))
        V = Bufs.at(P["buffer"]);
      else if (P.contains("texture"))
        V = Texs.at(P["texture"]);
      else if (P.contains("surface"))
        V = Surfs.at(P["surface"]);
      else
        V = static_cast<uint64_t>(P["value"].get<long long>());
      Values.push_back(V);
    }
    std::vector<void *> Params;
    for (uint64_t &V : Values)
      Params.push_back(&V);
    CK(cuLaunchKernel(F, L["grid"][0], L["grid"][1], L["grid"][2], L["block"][0], L["block"][1], L["block"][2], 0,
                      nullptr, Params.data(), nullptr));
  }
  CK(cuCtxSynchronize());
  mkdir(Out.c_str(), 0755);
  for (auto &[Name, B] : C["buffers"].items())
    if (B.contains("expect")) {
      std::vector<char> D(B["bytes"].get<size_t>());
      CK(cuMemcpyDtoH(D.data(), Bufs[Name], D.size()));
      writeFile(Out + "/" + B["expect"].get<std::string>(), D.data(), D.size());
    }
  for (auto &[Name, A] : section(C, "arrays").items())
    if (A.contains("expect")) {
      Array &R = Arrays[Name];
      std::vector<char> D(R.RowBytes * R.Rows * R.Slices);
      copyArray(R, D.data(), false);
      writeFile(Out + "/" + A["expect"].get<std::string>(), D.data(), D.size());
    }
  for (auto &[N, T] : Texs)
    CK(cuTexObjectDestroy(T));
  for (auto &[N, S] : Surfs)
    CK(cuSurfObjectDestroy(S));
  for (auto &[N, A] : Arrays)
    CK(cuArrayDestroy(A.A));
  for (auto &[N, B] : Bufs)
    CK(cuMemFree(B));
  CK(cuModuleUnload(M));
  printf("recorded %s\n", C["name"].get<std::string>().c_str());
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s CASES_DIR OUTDIR\n", argv[0]);
    return 2;
  }
  CK(cuInit(0));
  CUdevice D;
  CK(cuDeviceGet(&D, 0));
  CUcontext Ctx;
  CK(cuDevicePrimaryCtxRetain(&Ctx, D));
  CK(cuCtxSetCurrent(Ctx));
  json Index = json::parse(readFile(std::string(argv[1]) + "/index.json"));
  mkdir(argv[2], 0755);
  int Failed = 0;
  for (const json &E : Index["cases"])
    try {
      runCase(std::string(argv[1]) + "/" + E["dir"].get<std::string>(),
              std::string(argv[2]) + "/" + E["dir"].get<std::string>());
    } catch (int) {
      fprintf(stderr, "case %s failed\n", E["dir"].get<std::string>().c_str());
      ++Failed;
    }
  return Failed != 0;
}
