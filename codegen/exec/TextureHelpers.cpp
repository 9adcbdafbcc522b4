// Texture and surface instructions on object handles (the unified mode): the descriptor table the driver fills
// (ptxforge/codegen/Texture.h) and the helpers behind tex (tex.level, tex.grad), tld4, txq, suld.b, sust.b,
// sust.p, sured.b, sured.p and suq.
//
// Sampling follows CUDA's texture-fetching rules, checked against an H100 (tests/conformance/texture):
// unnormalized coordinates address texels directly, normalized ones are scaled by the size; point sampling
// takes texel floor(x); linear filtering takes x - 0.5, and weighs the texels at floor and floor + 1 with the
// fraction rounded to 8 fractional bits (a 9-bit weight, 0..256; ties round up: the GPU gives weight 1/256 at
// a fraction of exactly 1/512). Wrap and mirror need normalized coordinates; with unnormalized ones they clamp.
// A texel outside the resource is the border colour in border mode; integer fetches from linear memory outside
// it read zeros.
#include "Runtime.h"

#include "ptxforge/codegen/Texture.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

unsigned ptxforge::codegen::texelFormatBytes(TexelFormat F) {
  switch (F) {
  case TexelFormat::U8:
  case TexelFormat::S8:
    return 1;
  case TexelFormat::U16:
  case TexelFormat::S16:
  case TexelFormat::F16:
    return 2;
  default:
    return 4;
  }
}

// ---- the handle table ----
namespace {

constexpr uint64_t TableSize = 1u << 16;

struct Table {
  std::mutex Lock; ///< writers only; readers load the slot
  std::atomic<TextureDescriptor *> Slots[TableSize] = {};
  uint64_t Next = 0; ///< where the search for a free slot starts
};

Table &table() {
  static Table *T = new Table; // never destroyed: kernels may run during exit
  return *T;
}

} // namespace

uint64_t ptxforge::codegen::registerTextureObject(const TextureDescriptor &D) {
  Table &T = table();
  std::lock_guard<std::mutex> G(T.Lock);
  for (uint64_t I = 0; I < TableSize; ++I) {
    uint64_t S = (T.Next + I) % TableSize;
    if (!T.Slots[S].load(std::memory_order_relaxed)) {
      T.Slots[S].store(new TextureDescriptor(D), std::memory_order_release);
      T.Next = S + 1;
      return S + 1;
    }
  }
  return 0;
}

bool ptxforge::codegen::releaseTextureObject(uint64_t H) {
  if (H == 0 || H > TableSize)
    return false;
  Table &T = table();
  std::lock_guard<std::mutex> G(T.Lock);
  TextureDescriptor *D = T.Slots[H - 1].exchange(nullptr, std::memory_order_acq_rel);
  delete D;
  return D != nullptr;
}

const TextureDescriptor *ptxforge::codegen::findTextureObject(uint64_t H) {
  if (H == 0 || H > TableSize)
    return nullptr;
  return table().Slots[H - 1].load(std::memory_order_acquire);
}

// ---- texel access ----
namespace {

/// The geometry operand of the helpers: the dimension count, Layered for a1d/a2d/acube, Cube for cube/acube.
constexpr uint32_t Layered = 0x10;
constexpr uint32_t Cube = 0x20;

/// What a result register holds: a float, or the stored integer (signed or unsigned).
enum ResultKind : uint32_t { ResultF32 = 0, ResultS32 = 1, ResultU32 = 2 };

const TextureDescriptor &lookup(ThreadContext *C, uint64_t H, bool Surface, const char *Loc) {
  const TextureDescriptor *D = findTextureObject(H);
  if (!D || D->IsSurface != Surface)
    raiseFault(C, LaunchFault::IllegalAddress,
               std::string("illegal address: ") + (Surface ? "surface" : "texture") + " object handle " +
                   std::to_string(H) + " names no live object",
               true, Loc);
  return *D;
}

/// Channel Ch of the texel at P as the read mode gives it: a float (normalized for 8/16-bit integers unless
/// the texture reads integers) or the integer's bits.
uint32_t channel(const TextureDescriptor &D, const char *P, unsigned Ch, bool AsFloat) {
  const char *Q = P + Ch * texelFormatBytes(D.Format);
  auto Bits = [](float F) {
    uint32_t B;
    memcpy(&B, &F, 4);
    return B;
  };
  switch (D.Format) {
  case TexelFormat::U8: {
    uint8_t V = *reinterpret_cast<const uint8_t *>(Q);
    return AsFloat ? Bits(V / 255.0f) : V;
  }
  case TexelFormat::S8: {
    int8_t V = *reinterpret_cast<const int8_t *>(Q);
    return AsFloat ? Bits(std::max(V / 127.0f, -1.0f)) : static_cast<uint32_t>(static_cast<int32_t>(V));
  }
  case TexelFormat::U16: {
    uint16_t V;
    memcpy(&V, Q, 2);
    return AsFloat ? Bits(V / 65535.0f) : V;
  }
  case TexelFormat::S16: {
    int16_t V;
    memcpy(&V, Q, 2);
    return AsFloat ? Bits(std::max(V / 32767.0f, -1.0f)) : static_cast<uint32_t>(static_cast<int32_t>(V));
  }
  case TexelFormat::F16: {
    uint16_t V;
    memcpy(&V, Q, 2);
    return Bits(halfToFloat(V));
  }
  default: {
    uint32_t V;
    memcpy(&V, Q, 4);
    return V;
  }
  }
}

/// Whether reads of D give floats: float formats always, 8/16-bit integers unless read as integers.
bool readsFloat(const TextureDescriptor &D) {
  switch (D.Format) {
  case TexelFormat::F16:
  case TexelFormat::F32:
    return true;
  case TexelFormat::U32:
  case TexelFormat::S32:
    return false;
  default:
    return !D.ReadAsInteger;
  }
}

/// A texel's four result values.
struct Texel {
  uint32_t V[4];
};

/// Channels a texture lacks read 0, alpha too (an H100 returns {v, 0, 0, 0} for one channel).
Texel missingChannels() { return Texel{{0, 0, 0, 0}}; }

/// The border colour; integer reads get zeros (the GPU ignores the colour there).
Texel borderTexel(const TextureDescriptor &D, bool AsFloat) {
  Texel T = missingChannels();
  if (AsFloat)
    memcpy(T.V, D.BorderColor, 16);
  return T;
}

/// Index I along an axis of N texels under address mode M; false for a texel outside (border mode).
bool resolveIndex(int64_t &I, int64_t N, TexAddressMode M, bool Normalized) {
  if (I >= 0 && I < N) // every mode leaves an index inside alone (and the divisions below are slow)
    return true;
  if (!Normalized && (M == TexAddressMode::Wrap || M == TexAddressMode::Mirror))
    M = TexAddressMode::Clamp;
  switch (M) {
  case TexAddressMode::Wrap:
    I = ((I % N) + N) % N;
    return true;
  case TexAddressMode::Mirror: {
    int64_t P = ((I % (2 * N)) + 2 * N) % (2 * N);
    I = P >= N ? 2 * N - 1 - P : P;
    return true;
  }
  case TexAddressMode::Border:
    return I >= 0 && I < N;
  default:
    I = std::clamp<int64_t>(I, 0, N - 1);
    return true;
  }
}

/// The texel at integer indices X (per dimension) of layer Layer, after address resolution (wrap and mirror
/// only where Normalized); AsFloat: channels as the read mode gives them, else the stored integers.
Texel fetch(const TextureDescriptor &D, const int64_t *X, uint64_t Layer, bool AsFloat, bool Normalized) {
  int64_t Idx[3] = {X[0], X[1], X[2]};
  const uint64_t Size[3] = {D.Width, D.Height, D.Depth};
  for (unsigned A = 0; A < D.Dims; ++A)
    if (!resolveIndex(Idx[A], static_cast<int64_t>(Size[A]), D.Address[A], Normalized))
      return borderTexel(D, AsFloat);
  uint64_t Slice = D.Layers ? Layer : (D.Dims == 3 ? Idx[2] : 0);
  const char *P = D.Data + Slice * D.SlicePitch + (D.Dims >= 2 ? Idx[1] : 0) * D.RowPitch + Idx[0] * D.texelBytes();
  Texel T = missingChannels();
  for (unsigned Ch = 0; Ch < D.Channels; ++Ch)
    T.V[Ch] = channel(D, P, Ch, AsFloat);
  return T;
}

/// floor(V) as an index, saturated so that NaN and huge coordinates stay in range of the arithmetic.
int64_t floorIndex(float V) {
  if (!(V == V))
    return 0;
  return static_cast<int64_t>(std::clamp(std::floor(V), -1e15f, 1e15f));
}

float asFloat(uint32_t B) {
  float F;
  memcpy(&F, &B, 4);
  return F;
}

/// The texel-space coordinate of float coordinate X along axis A.
float texelCoord(const TextureDescriptor &D, float X, unsigned A) {
  const uint64_t Size[3] = {D.Width, D.Height, D.Depth};
  return D.NormalizedCoords ? X * static_cast<float>(Size[A]) : X;
}

/// Normalized integer texels are filtered as 16-bit fixed point (bit for bit what an H100 returns for u8, u16
/// and s16): 8-bit values widen by bit replication (u8: v * 257; s8: the magnitude m as m<<8 | m<<1 | m>>6,
/// which matches 217 of 256 recorded s8 samples, the others within one 16-bit step), the weighted sum rounds
/// half up to 16 bits, and the result is that over 65535 (unsigned) or 32767 (signed, at least -1).
int64_t fixed16(TexelFormat F, uint32_t Bits) {
  int32_t V = static_cast<int32_t>(Bits);
  switch (F) {
  case TexelFormat::U8:
    return V * 257;
  case TexelFormat::S8: {
    int32_t M = std::min(V < 0 ? -V : V, 127), E = M << 8 | M << 1 | M >> 6;
    return V < 0 ? -E : E;
  }
  default:
    return V;
  }
}

/// F rounded to the nearest half-precision value: half-float texels filter in half precision (the recorded
/// samples agree within one half ulp).
float roundToHalf(float F) {
  if (!std::isfinite(F) || F == 0)
    return F;
  int E;
  std::frexp(F, &E);                   // F = m * 2^E, 0.5 <= |m| < 1
  int Quantum = std::max(E - 11, -24); // 11 significant bits; subnormal halves have a fixed quantum
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(static_cast<double>(F), -Quantum)), Quantum));
}

/// Total (in 1/256) split along the axes in Order, one after another: each part's upper share is part x A[axis]
/// / 256, rounded half up, the lower one the rest. W is indexed by corner (bit k set: upper texel along axis k).
void splitWeights(int Total, const int *A, const unsigned *Order, unsigned Axes, int *W) {
  int Parts[8] = {Total}, Bits[8] = {0};
  unsigned Count = 1;
  for (unsigned K = 0; K < Axes; ++K) {
    unsigned Axis = Order[K];
    for (unsigned P = 0; P < Count; ++P) {
      int Upper = (Parts[P] * A[Axis] + 128) >> 8;
      Parts[Count + P] = Upper, Parts[P] -= Upper;
      Bits[Count + P] = Bits[P] | (1 << Axis);
    }
    Count *= 2;
  }
  for (unsigned P = 0; P < Count; ++P)
    W[Bits[P]] = Parts[P];
}

/// The GPU's corner weights, in 1/256, of linear filtering with per-axis weights A (of the upper texel, 0..256)
/// over Dims axes; corner bit k set = upper texel along axis k. Along one axis the weights are 256 - a and a.
/// In 2D the GPU rounds only the upper-upper product, a*b/256 (half up), and derives the others from it so that
/// they sum to 256: a - ab, b - ab, 256 - a - b + ab (an H100 gives these bit for bit; rounding all four
/// products alone misses where two round half up). In 3D, splitting 256 along z, then x, then y, rounding each
/// upper part half up, matches 248 of the 256 recorded trilinear samples; the other 8 differ by one unit of one
/// weight (tests/conformance/texture/README.md).
void cornerWeights(const int *A, unsigned Dims, int *W) {
  if (Dims == 3) {
    static const unsigned Order[] = {2, 0, 1};
    splitWeights(256, A, Order, 3, W);
    return;
  }
  W[0] = 256 - A[0], W[1] = A[0];
  if (Dims == 2) {
    int AB = (A[0] * A[1] + 128) >> 8;
    W[3] = AB, W[1] = A[0] - AB, W[2] = A[1] - AB, W[0] = 256 - A[0] - A[1] + AB;
  }
}

/// Filtering coordinates are fixed point with 8 fractional bits: U (texel space, less 0.5) rounded half up to
/// 1/256 gives the lower texel and the upper texel's weight. (tld4 shows the rounding: at y = 0.499 an H100
/// gathers rows 0 and 1, not the clamped rows -1 and 0.)
void fixedCoord(float U, int64_t &Base, int &Weight) {
  if (!(U == U)) {
    Base = 0, Weight = 0;
    return;
  }
  int64_t F = static_cast<int64_t>(std::floor(std::clamp(static_cast<double>(U), -1e15, 1e15) * 256.0 + 0.5));
  Base = F >> 8, Weight = static_cast<int>(F & 255);
}

/// The weighted sum linear filtering builds: float texels in double, normalized integers in 16-bit fixed point.
struct FilterSum {
  explicit FilterSum(TexelFormat F) : Format(F), IsFixed(F != TexelFormat::F32 && F != TexelFormat::F16) {}
  /// Adds the texels of D's corners around Base with weights W (in 1/256, by corner bits), Dims axes.
  void add(const TextureDescriptor &D, const int64_t *Base, const int *W, uint64_t Layer) {
    for (unsigned Corner = 0; Corner < (1u << D.Dims); ++Corner) {
      if (W[Corner] == 0)
        continue;
      int64_t X[3] = {Base[0], Base[1], Base[2]};
      for (unsigned A = 0; A < D.Dims; ++A)
        X[A] += (Corner >> A) & 1;
      Texel T = fetch(D, X, Layer, !IsFixed, D.NormalizedCoords);
      for (unsigned Ch = 0; Ch < 4; ++Ch) {
        if (IsFixed)
          Fixed[Ch] += W[Corner] * fixed16(Format, T.V[Ch]);
        else
          Acc[Ch] += W[Corner] / 256.0 * asFloat(T.V[Ch]);
      }
    }
  }
  Texel result() const {
    Texel R;
    for (unsigned Ch = 0; Ch < 4; ++Ch) {
      float F = static_cast<float>(Acc[Ch]);
      if (IsFixed) {
        int64_t N = (Fixed[Ch] + 128) >> 8; // half up
        bool Signed = Format == TexelFormat::S8 || Format == TexelFormat::S16;
        F = Signed ? std::max(static_cast<float>(N / 32767.0), -1.0f) : static_cast<float>(N / 65535.0);
      } else if (Format == TexelFormat::F16) {
        F = roundToHalf(F);
      }
      memcpy(&R.V[Ch], &F, 4);
    }
    return R;
  }

  TexelFormat Format;
  bool IsFixed;
  double Acc[4] = {0, 0, 0, 0};
  int64_t Fixed[4] = {0, 0, 0, 0};
};

/// Linear filtering: Dims axes of coordinate U (texel space, already less 0.5).
Texel filterLinear(const TextureDescriptor &D, const float *U, uint64_t Layer) {
  int64_t Base[3] = {0, 0, 0};
  int Weight[3] = {0, 0, 0}; // of the upper texel, in 1/256
  for (unsigned A = 0; A < D.Dims; ++A)
    fixedCoord(U[A], Base[A], Weight[A]);
  int W[8];
  cornerWeights(Weight, D.Dims, W);
  FilterSum Sum(D.Format);
  Sum.add(D, Base, W, Layer);
  return Sum.result();
}

/// The layer index operand: clamped to the array's layers.
uint64_t layerOf(const TextureDescriptor &D, uint32_t Bits) {
  int64_t L = static_cast<int32_t>(Bits);
  return D.Layers ? static_cast<uint64_t>(std::clamp<int64_t>(L, 0, static_cast<int64_t>(D.Layers) - 1)) : 0;
}

/// The cubemap face (0..5: +x, -x, +y, -y, +z, -z) direction (X, Y, Z) points at, and the face coordinates S
/// (0..1 across it), as CUDA's programming guide tabulates them (its cubemap fetch table). The major axis is
/// the one of largest magnitude; ties go to x, then y.
unsigned cubeFace(float X, float Y, float Z, float S[2]) {
  float AX = std::fabs(X), AY = std::fabs(Y), AZ = std::fabs(Z);
  unsigned Face;
  float M, SC, TC;
  if (AX >= AY && AX >= AZ)
    Face = X >= 0 ? 0 : 1, M = AX, SC = X >= 0 ? -Z : Z, TC = -Y;
  else if (AY >= AZ)
    Face = Y >= 0 ? 2 : 3, M = AY, SC = X, TC = Y >= 0 ? Z : -Z;
  else
    Face = Z >= 0 ? 4 : 5, M = AZ, SC = Z >= 0 ? X : -X, TC = -Y;
  S[0] = (SC / M + 1) * 0.5f, S[1] = (TC / M + 1) * 0.5f;
  return Face;
}

/// tex.cube/acube: Coords holds {cubemap index, x, y, z}; the face is a layer of D (six per cubemap), sampled
/// at normalized face coordinates.
Texel sampleCube(const TextureDescriptor &D, uint32_t Geom, const uint32_t *Coords, bool AsFloat) {
  float S[2];
  uint64_t Face = cubeFace(asFloat(Coords[1]), asFloat(Coords[2]), asFloat(Coords[3]), S);
  uint64_t Cubes = D.Layers / 6 ? D.Layers / 6 : 1;
  uint64_t Index = (Geom & Layered) ? static_cast<uint64_t>(std::clamp<int64_t>(static_cast<int32_t>(Coords[0]), 0,
                                                                                static_cast<int64_t>(Cubes) - 1))
                                    : 0;
  uint64_t Layer = D.Layers ? std::min(Index * 6 + Face, D.Layers - 1) : 0;
  const float Size[2] = {static_cast<float>(D.Width), static_cast<float>(D.Height)};
  if (D.Filter == TexFilterMode::Linear && AsFloat) {
    float U[3] = {S[0] * Size[0] - 0.5f, S[1] * Size[1] - 0.5f, 0};
    return filterLinear(D, U, Layer);
  }
  int64_t Idx[3] = {floorIndex(S[0] * Size[0]), floorIndex(S[1] * Size[1]), 0};
  return fetch(D, Idx, Layer, AsFloat, true);
}

/// One texture sample of D (a level of it, for mipmaps): Coords holds {layer, x, y, z} (float bits unless
/// IntCoords).
Texel sample(const TextureDescriptor &D, uint32_t Geom, uint32_t IntCoords, const uint32_t *Coords) {
  bool AsFloat = readsFloat(D);
  uint64_t Layer = (Geom & Layered) ? layerOf(D, Coords[0]) : 0;
  Texel T;
  if (Geom & Cube) {
    T = sampleCube(D, Geom, Coords, AsFloat);
  } else if (D.Resource == TexResource::Linear) {
    // Linear memory takes integer texel indices; outside it reads zeros.
    int64_t X = IntCoords ? static_cast<int32_t>(Coords[1]) : floorIndex(asFloat(Coords[1]));
    if (X < 0 || static_cast<uint64_t>(X) >= D.Width)
      return missingChannels();
    int64_t Idx[3] = {X, 0, 0};
    T = fetch(D, Idx, 0, AsFloat, false);
  } else if (IntCoords) {
    int64_t Idx[3] = {static_cast<int32_t>(Coords[1]), static_cast<int32_t>(Coords[2]),
                      static_cast<int32_t>(Coords[3])};
    T = fetch(D, Idx, Layer, AsFloat, false); // integer coordinates address texels directly
  } else if (D.Filter == TexFilterMode::Linear && AsFloat) {
    float U[3];
    for (unsigned A = 0; A < D.Dims; ++A)
      U[A] = texelCoord(D, asFloat(Coords[1 + A]), A) - 0.5f;
    T = filterLinear(D, U, Layer);
  } else {
    int64_t Idx[3] = {0, 0, 0};
    for (unsigned A = 0; A < D.Dims; ++A)
      Idx[A] = floorIndex(texelCoord(D, asFloat(Coords[1 + A]), A));
    T = fetch(D, Idx, Layer, AsFloat, D.NormalizedCoords);
  }
  return T;
}

/// tex: Coords holds {layer, x, y, z} (float bits unless IntCoords). A mipmapped texture samples level 0.
void ptxrt_tex(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t IntCoords, const uint32_t *Coords, uint32_t *Out,
               const char *Loc) {
  Texel T = sample(lookup(C, H, false, Loc), Geom, IntCoords, Coords);
  memcpy(Out, T.V, 16);
}

// ---- mipmaps: tex.level and tex.grad ----

/// D with level L's storage and extents in place of level 0's.
TextureDescriptor levelOf(const TextureDescriptor &D, unsigned L) {
  TextureDescriptor E = D;
  const TextureLevel &V = D.Level[L];
  E.Data = V.Data, E.Width = V.Width, E.Height = V.Height, E.Depth = V.Depth;
  E.RowPitch = V.RowPitch, E.SlicePitch = V.SlicePitch;
  E.Levels = 1;
  return E;
}

/// The LOD of tex.grad's gradients Dx and Dy (Axes components each): log2 of the longer one in level-0 texels,
/// to the nearest 1/256. For gradients along the axes an H200's LOD is within 1/256 of that (its log2 is an
/// approximation that errs by up to 0.6/256 either side; rounding to the nearest matches 80% of the recorded
/// samples, truncating 57%: tests/cudart/mipmap_surface.cu). A gradient with two non-zero components gets an
/// LOD of the GPU's own that this does not model: (g, g) with (-g, g) gives log2(1.375g), not log2(1.414g), and
/// (g, g/2) with (g/4, g) log2(1.325g), not log2(1.118g).
float gradientLod(const TextureDescriptor &D, unsigned Axes, const uint32_t *Dx, const uint32_t *Dy) {
  const uint64_t Size[3] = {D.Width, D.Height, D.Depth};
  double Lx = 0, Ly = 0;
  for (unsigned A = 0; A < Axes && A < 3; ++A) {
    float Scale = D.NormalizedCoords ? static_cast<float>(Size[A]) : 1.0f;
    double X = asFloat(Dx[A]) * Scale, Y = asFloat(Dy[A]) * Scale; // texel units, scaled in f32 as the GPU does
    Lx += X * X, Ly += Y * Y;
  }
  double L = std::max(Lx, Ly);
  return L > 0 ? static_cast<float>(std::floor(0.5 * std::log2(L) * 256 + 0.5) / 256) : -INFINITY;
}

/// The level (in 1/256 of a level, 8 fractional bits) sampled at Lod: Lod plus the bias, clamped by the
/// texture's level clamps and to its levels, truncated to 1/256 (an H100 truncates: tests/cudart/
/// mipmap_surface.cu's LOD sweep).
int64_t fixedLevel(const TextureDescriptor &D, float Lod) {
  double L = static_cast<double>(Lod) + D.MipmapLevelBias;
  if (!(L == L))
    L = 0;
  L = std::min<double>(L, D.MaxMipmapLevel);
  L = std::max<double>(L, D.MinMipmapLevel);
  L = std::clamp<double>(L, 0, D.Levels - 1);
  return static_cast<int64_t>(std::floor(L * 256));
}

/// Linear filtering within and between levels L0 and L0 + 1 (F/256 of the way to the second): the GPU filters
/// the eight (in 2D) texels at once, splitting 256 along the levels first and then each level's part along z, x
/// and y as 3D filtering does, each upper part rounded half up (an H200 gives these weights bit for bit in all 512
/// recorded trilinear samples: tests/cudart/mipmap_surface.cu).
Texel filterTrilinear(const TextureDescriptor &D, unsigned L0, int F, uint32_t Geom, const uint32_t *Coords) {
  static const unsigned Order[3][3] = {{0}, {0, 1}, {2, 0, 1}};
  uint64_t Layer = (Geom & Layered) ? layerOf(D, Coords[0]) : 0;
  FilterSum Sum(D.Format);
  for (unsigned K = 0; K < 2; ++K) {
    TextureDescriptor Level = levelOf(D, L0 + K);
    int64_t Base[3] = {0, 0, 0};
    int Weight[3] = {0, 0, 0};
    const uint64_t Size[3] = {Level.Width, Level.Height, Level.Depth};
    for (unsigned A = 0; A < Level.Dims; ++A) {
      float U = texelCoord(Level, asFloat(Coords[1 + A]), A) - 0.5f;
      // Clamping clamps the coordinate itself first, so that an edge texel takes all the weight along that axis
      // (which changes how the rounded weights fall: 7 of the 512 recorded samples need it).
      TexAddressMode M = Level.Address[A];
      if (M == TexAddressMode::Clamp || (!Level.NormalizedCoords && M != TexAddressMode::Border))
        U = std::clamp(U, 0.0f, static_cast<float>(Size[A] - 1));
      fixedCoord(U, Base[A], Weight[A]);
    }
    int W[8];
    splitWeights(K ? F : 256 - F, Weight, Order[Level.Dims - 1], Level.Dims, W);
    Sum.add(Level, Base, W, Layer);
  }
  return Sum.result();
}

/// A sample at level of detail Lod: the nearest level (ties up) with point mipmap filtering, else the two
/// levels around it weighed by the 8-bit fraction (integer reads take the nearer level).
Texel sampleLod(const TextureDescriptor &D, uint32_t Geom, uint32_t IntCoords, const uint32_t *Coords, float Lod) {
  if (D.Levels <= 1)
    return sample(D, Geom, IntCoords, Coords);
  int64_t Q = fixedLevel(D, Lod);
  unsigned Last = D.Levels - 1;
  if (D.MipmapFilter == TexFilterMode::Point)
    return sample(levelOf(D, std::min<unsigned>(static_cast<unsigned>((Q + 128) >> 8), Last)), Geom, IntCoords, Coords);
  unsigned L0 = static_cast<unsigned>(Q >> 8);
  int F = static_cast<int>(Q & 255);
  if (F == 0 || L0 >= Last)
    return sample(levelOf(D, std::min(L0, Last)), Geom, IntCoords, Coords);
  if (D.Filter == TexFilterMode::Linear && readsFloat(D) && !IntCoords && !(Geom & Cube) &&
      D.Resource == TexResource::Array)
    return filterTrilinear(D, L0, F, Geom, Coords);
  Texel T0 = sample(levelOf(D, L0), Geom, IntCoords, Coords);
  Texel T1 = sample(levelOf(D, L0 + 1), Geom, IntCoords, Coords);
  if (!readsFloat(D))
    return F < 128 ? T0 : T1;
  Texel R;
  for (unsigned Ch = 0; Ch < 4; ++Ch) {
    float V = static_cast<float>(
        ((256 - F) * static_cast<double>(asFloat(T0.V[Ch])) + F * static_cast<double>(asFloat(T1.V[Ch]))) / 256);
    memcpy(&R.V[Ch], &V, 4);
  }
  return R;
}

/// tex.level (Mode 0: Lod[0] is the LOD) and tex.grad (Mode 1: Lod[0..2] the x gradient, Lod[4..6] the y one).
void ptxrt_tex_lod(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t IntCoords, const uint32_t *Coords,
                   uint32_t Mode, const uint32_t *Lod, uint32_t *Out, const char *Loc) {
  const TextureDescriptor &D = lookup(C, H, false, Loc);
  float L = Mode == 0 ? asFloat(Lod[0]) : gradientLod(D, Geom & 0xf, Lod, Lod + 4);
  Texel T = sampleLod(D, Geom, IntCoords, Coords, L);
  memcpy(Out, T.V, 16);
}

/// tld4: component Comp of the 2x2 texels bilinear filtering at (x, y) would weigh, in the order
/// (x0,y1), (x1,y1), (x1,y0), (x0,y0).
void ptxrt_tld4(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t Comp, const uint32_t *Coords, uint32_t *Out,
                const char *Loc) {
  const TextureDescriptor &D = lookup(C, H, false, Loc);
  bool AsFloat = readsFloat(D);
  uint64_t Layer = (Geom & Layered) ? layerOf(D, Coords[0]) : 0;
  int64_t X0, Y0;
  int Unused;
  fixedCoord(texelCoord(D, asFloat(Coords[1]), 0) - 0.5f, X0, Unused);
  fixedCoord(texelCoord(D, asFloat(Coords[2]), 1) - 0.5f, Y0, Unused);
  const int64_t Corners[4][2] = {{X0, Y0 + 1}, {X0 + 1, Y0 + 1}, {X0 + 1, Y0}, {X0, Y0}};
  for (unsigned I = 0; I < 4; ++I) {
    int64_t Idx[3] = {Corners[I][0], Corners[I][1], 0};
    Out[I] = fetch(D, Idx, Layer, AsFloat, D.NormalizedCoords).V[Comp & 3];
  }
}

/// The query operand of txq and suq: the modifier's position in this list.
enum Query : uint32_t {
  QWidth,
  QHeight,
  QDepth,
  QChannelDataType,
  QChannelOrder,
  QNormalizedCoords,
  QFilterMode,
  QAddrMode0,
  QAddrMode1,
  QAddrMode2,
  QArraySize,
  QNumMipmapLevels,
  QNumSamples,
  QMemoryLayout
};

/// txq/suq.channel_data_type: the OpenCL constant the PTX ISA names (CL_SNORM_INT8 0x10D0 ... CL_FLOAT 0x10DE);
/// 8/16-bit integers read as normalized floats are the UNORM/SNORM kinds.
uint32_t channelDataType(const TextureDescriptor &D) {
  bool Norm = !D.ReadAsInteger && !D.IsSurface;
  switch (D.Format) {
  case TexelFormat::S8:
    return Norm ? 0x10D0 : 0x10D7;
  case TexelFormat::S16:
    return Norm ? 0x10D1 : 0x10D8;
  case TexelFormat::U8:
    return Norm ? 0x10D2 : 0x10DA;
  case TexelFormat::U16:
    return Norm ? 0x10D3 : 0x10DB;
  case TexelFormat::S32:
    return 0x10D9;
  case TexelFormat::U32:
    return 0x10DC;
  case TexelFormat::F16:
    return 0x10DD;
  default:
    return 0x10DE;
  }
}

uint32_t query(const TextureDescriptor &D, uint32_t Q) {
  switch (Q) {
  case QWidth:
    return static_cast<uint32_t>(D.Width);
  case QHeight:
    return static_cast<uint32_t>(D.Height);
  case QDepth:
    return static_cast<uint32_t>(D.Layers ? 1 : D.Depth);
  case QChannelDataType:
    return channelDataType(D);
  case QChannelOrder:
    return D.Channels == 1 ? 0x10B0 : D.Channels == 2 ? 0x10B2 : 0x10B5; // CL_R, CL_RG, CL_RGBA
  case QNormalizedCoords:
    return D.NormalizedCoords;
  case QFilterMode:
    return static_cast<uint32_t>(D.Filter);
  case QAddrMode0:
  case QAddrMode1:
  case QAddrMode2:
    return static_cast<uint32_t>(D.Address[Q - QAddrMode0]);
  case QArraySize:
    return static_cast<uint32_t>(D.Layers);
  case QNumMipmapLevels:
    return D.Levels;
  case QNumSamples:
    return 1;
  case QMemoryLayout:
    return D.Resource == TexResource::Array ? 0 : 1;
  default:
    return 0;
  }
}

uint32_t ptxrt_txq(ThreadContext *C, uint64_t H, uint32_t Q, const char *Loc) {
  return query(lookup(C, H, false, Loc), Q);
}

/// txq.level.{width,height,depth}: the extent of mipmap level Level (clamped to the levels; a texture without
/// mipmaps has one).
uint32_t ptxrt_txq_level(ThreadContext *C, uint64_t H, uint32_t Q, uint32_t Level, const char *Loc) {
  const TextureDescriptor &D = lookup(C, H, false, Loc);
  int64_t L = std::clamp<int64_t>(static_cast<int32_t>(Level), 0, static_cast<int64_t>(D.Levels) - 1);
  return query(L ? levelOf(D, static_cast<unsigned>(L)) : D, Q);
}

uint32_t ptxrt_suq(ThreadContext *C, uint64_t H, uint32_t Q, const char *Loc) {
  return query(lookup(C, H, true, Loc), Q);
}

/// Surface boundary modes.
enum Boundary : uint32_t { BTrap = 0, BClamp = 1, BZero = 2 };

/// The address of the Bytes-wide surface element at byte x Coords[1], rows Coords[2], slice/layer Coords[3] or
/// Coords[0], under Mode: null for zero mode out of range; a fault for trap mode out of range or misaligned x.
char *surfaceAddress(ThreadContext *C, const TextureDescriptor &D, uint32_t Geom, uint32_t Mode, uint32_t Bytes,
                     const uint32_t *Coords, const char *Loc) {
  int64_t X = static_cast<int32_t>(Coords[1]);
  int64_t Y = (Geom & 0xf) >= 2 ? static_cast<int32_t>(Coords[2]) : 0;
  int64_t Z = (Geom & Layered)    ? static_cast<int32_t>(Coords[0])
              : (Geom & 0xf) == 3 ? static_cast<int32_t>(Coords[3])
                                  : 0;
  int64_t RowBytes = static_cast<int64_t>(D.Width * D.texelBytes());
  int64_t Rows = static_cast<int64_t>(D.Height), Slices = static_cast<int64_t>(D.Layers ? D.Layers : D.Depth);
  if (X % Bytes)
    raiseFault(C, LaunchFault::MisalignedAddress, "misaligned address: a surface access not aligned to its size", true,
               Loc);
  bool Inside = X >= 0 && X + Bytes <= RowBytes && Y >= 0 && Y < Rows && Z >= 0 && Z < Slices;
  if (!Inside) {
    if (Mode == BZero)
      return nullptr;
    if (Mode == BTrap)
      raiseFault(C, LaunchFault::IllegalAddress, "illegal address: surface access out of bounds", true, Loc);
    X = std::clamp<int64_t>(X, 0, RowBytes - Bytes), Y = std::clamp<int64_t>(Y, 0, Rows - 1);
    Z = std::clamp<int64_t>(Z, 0, Slices - 1);
  }
  return D.Data + Z * D.SlicePitch + Y * D.RowPitch + X;
}

void ptxrt_suld(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t Mode, uint32_t Bytes, const uint32_t *Coords,
                void *Out, const char *Loc) {
  const char *P = surfaceAddress(C, lookup(C, H, true, Loc), Geom, Mode, Bytes, Coords, Loc);
  if (P)
    memcpy(Out, P, Bytes);
  else
    memset(Out, 0, Bytes);
}

void ptxrt_sust(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t Mode, uint32_t Bytes, const uint32_t *Coords,
                const void *In, const char *Loc) {
  if (char *P = surfaceAddress(C, lookup(C, H, true, Loc), Geom, Mode, Bytes, Coords, Loc))
    memcpy(P, In, Bytes);
}

/// Coords with the x coordinate, which counts samples (sust.p, sured.p), in bytes.
void sampleToByteX(const TextureDescriptor &D, const uint32_t *Coords, uint32_t *Out) {
  memcpy(Out, Coords, 16);
  int64_t X = static_cast<int64_t>(static_cast<int32_t>(Coords[1])) * D.texelBytes();
  Out[1] = static_cast<uint32_t>(static_cast<int32_t>(std::clamp<int64_t>(X, INT32_MIN, INT32_MAX)));
}

/// An f32 as a half, rounded toward zero (what an H100's sust.p stores: 0.99 -> 0x3beb, 1e6 -> 65504); NaNs keep
/// the top bits of their payload.
uint16_t halfTowardZero(uint32_t B) {
  uint16_t Sign = static_cast<uint16_t>(B >> 16 & 0x8000);
  int Exp = static_cast<int>(B >> 23 & 255);
  uint32_t Man = B & 0x7fffff;
  if (Exp == 255)
    return Sign | 0x7c00 | (Man ? std::max<uint32_t>(Man >> 13, 1) : 0);
  int E = Exp - 127 + 15;
  if (E >= 31)
    return Sign | 0x7bff;
  if (E <= 0) {
    if (E < -10)
      return Sign;
    return Sign | static_cast<uint16_t>((Man | 0x800000) >> (14 - E));
  }
  return Sign | static_cast<uint16_t>(E << 10 | Man >> 13);
}

/// sust.p's conversion of one .b32 source element to channel format F: integer formats take it as an integer
/// of their signedness and saturate, f16 rounds the f32 toward zero, f32 stores the bits (an H100's results:
/// tests/cudart/mipmap_surface.cu).
void storeFormatted(TexelFormat F, char *P, uint32_t V) {
  int32_t S = static_cast<int32_t>(V);
  switch (F) {
  case TexelFormat::U8: {
    uint8_t X = static_cast<uint8_t>(std::min<uint32_t>(V, 255));
    memcpy(P, &X, 1);
    return;
  }
  case TexelFormat::S8: {
    int8_t X = static_cast<int8_t>(std::clamp<int32_t>(S, -128, 127));
    memcpy(P, &X, 1);
    return;
  }
  case TexelFormat::U16: {
    uint16_t X = static_cast<uint16_t>(std::min<uint32_t>(V, 65535));
    memcpy(P, &X, 2);
    return;
  }
  case TexelFormat::S16: {
    int16_t X = static_cast<int16_t>(std::clamp<int32_t>(S, -32768, 32767));
    memcpy(P, &X, 2);
    return;
  }
  case TexelFormat::F16: {
    uint16_t X = halfTowardZero(V);
    memcpy(P, &X, 2);
    return;
  }
  default:
    memcpy(P, &V, 4);
  }
}

/// sust.p: N source elements for the sample's channels in order (extra ones ignored; channels without one
/// are stored as 0, where the ISA leaves them unpredictable).
void ptxrt_sust_p(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t Mode, uint32_t N, const uint32_t *Coords,
                  const uint32_t *In, const char *Loc) {
  const TextureDescriptor &D = lookup(C, H, true, Loc);
  uint32_t ByteCoords[4];
  sampleToByteX(D, Coords, ByteCoords);
  char *P = surfaceAddress(C, D, Geom, Mode, D.texelBytes(), ByteCoords, Loc);
  if (!P)
    return;
  for (unsigned Ch = 0; Ch < D.Channels; ++Ch)
    storeFormatted(D.Format, P + Ch * texelFormatBytes(D.Format), Ch < N ? In[Ch] : 0);
}

/// sured's operation and type, as the lowering encodes them.
enum ReduceOp : uint32_t { RAdd, RMin, RMax, RAnd, ROr };

template <typename T> void reduce(T *P, uint32_t Op, T V) {
  switch (Op) {
  case RAdd:
    __atomic_fetch_add(P, V, __ATOMIC_RELAXED);
    break;
  case RAnd:
    __atomic_fetch_and(P, V, __ATOMIC_RELAXED);
    break;
  case ROr:
    __atomic_fetch_or(P, V, __ATOMIC_RELAXED);
    break;
  default: {
    T Old = __atomic_load_n(P, __ATOMIC_RELAXED);
    while ((Op == RMin ? V < Old : V > Old) &&
           !__atomic_compare_exchange_n(P, &Old, V, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
  }
}

/// Type: 0 u32, 1 s32, 2 u64, 3 s64.
/// OpType: Type | Op << 4 | 0x100 for sured.p (x counts samples; the format's signedness picks the type).
void ptxrt_sured(ThreadContext *C, uint64_t H, uint32_t Geom, uint32_t Mode, uint32_t OpType, const uint32_t *Coords,
                 uint64_t Value, const char *Loc) {
  uint32_t Op = OpType >> 4 & 15, Type = OpType & 3;
  uint32_t Bytes = Type >= 2 ? 8 : 4;
  const TextureDescriptor &D = lookup(C, H, true, Loc);
  uint32_t ByteCoords[4];
  if (OpType & 0x100) {
    bool Signed = D.Format == TexelFormat::S32 || D.Format == TexelFormat::S16 || D.Format == TexelFormat::S8;
    Type = (Type & 2) | Signed;
    sampleToByteX(D, Coords, ByteCoords);
    Coords = ByteCoords;
  }
  char *P = surfaceAddress(C, D, Geom, Mode, Bytes, Coords, Loc);
  if (!P)
    return;
  switch (Type) {
  case 0:
    reduce(reinterpret_cast<uint32_t *>(P), Op, static_cast<uint32_t>(Value));
    break;
  case 1:
    reduce(reinterpret_cast<int32_t *>(P), Op, static_cast<int32_t>(Value));
    break;
  case 2:
    reduce(reinterpret_cast<uint64_t *>(P), Op, Value);
    break;
  default:
    reduce(reinterpret_cast<int64_t *>(P), Op, static_cast<int64_t>(Value));
    break;
  }
}

} // namespace

void ptxforge::codegen::exec::registerTextureHelpers(HelperTable &T) {
  T.insert(T.end(),
           {PTXRT_HELPER(ptxrt_tex), PTXRT_HELPER(ptxrt_tex_lod), PTXRT_HELPER(ptxrt_tld4), PTXRT_HELPER(ptxrt_txq),
            PTXRT_HELPER(ptxrt_txq_level), PTXRT_HELPER(ptxrt_suq), PTXRT_HELPER(ptxrt_suld), PTXRT_HELPER(ptxrt_sust),
            PTXRT_HELPER(ptxrt_sust_p), PTXRT_HELPER(ptxrt_sured)});
}
