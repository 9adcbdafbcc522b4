// Texture and surface instructions on object handles (the unified mode: the texture operand is a 64-bit handle
// in a register): tex (with tex.level and tex.grad), tld4, txq, suld.b, sust.b, sust.p, sured.b, sured.p and suq. Each
// calls a helper of exec/TextureHelpers.cpp with the handle, which finds the descriptor the driver registered;
// coordinates go in, and results come back, through the function's scratch buffers (tex.cube/acube pass their direction
// as three coordinates); tex.level passes its LOD and tex.grad its gradients through another buffer. Texture references
// (a `.texref` symbol as the operand), the independent mode's separate sampler, offsets and depth compare are
// reported as unsupported. istypep needs no helper: on the GPU it tests one bit of the value (below).
#include "FamilyLowering.h"

namespace {

constexpr uint32_t Layered = 0x10; // exec/TextureHelpers.cpp's geometry flags
constexpr uint32_t Cube = 0x20;

/// The geometry (dimension count, | Layered for a1d/a2d/acube, | Cube for cube/acube: a direction of three
/// coordinates); 0 when I names none this lowering handles.
uint32_t geometry(const ptx::Instruction &I) {
  if (I.has(Modifier::G1d))
    return 1;
  if (I.has(Modifier::G2d))
    return 2;
  if (I.has(Modifier::G3d))
    return 3;
  if (I.has(Modifier::A1d))
    return 1 | Layered;
  if (I.has(Modifier::A2d))
    return 2 | Layered;
  if (I.has(Modifier::Cube))
    return 3 | Cube;
  if (I.has(Modifier::Acube))
    return 3 | Cube | Layered;
  return 0;
}

/// `[handle, {coords}]` or `[handle]`: the handle register, or null (a texref symbol, or no register).
llvm::Value *handle(FunctionLowering &L, const ptx::Operand &Op) {
  if (Op.Kind != ptx::OperandKind::Address || Op.Reg == ptx::NoReg || Op.Bits)
    return nullptr;
  return L.addressRegister(Op);
}

llvm::Value *location(FunctionLowering &L, const ptx::Instruction &I) {
  return L.b().CreateGlobalString(L.module().where(I.Loc), "ptx.tex.loc");
}

/// Stores the coordinate vector of Addr into a 4 x i32 scratch buffer as {layer, x, y, z}: for a1d/a2d the
/// first element is the layer; the rest are read as CType. False when the vector's shape does not match.
llvm::Value *coordinates(FunctionLowering &L, const ptx::Operand &Addr, uint32_t Geom, ScalarType CType) {
  auto &B = L.b();
  if (Addr.Elements.size() != 1)
    return nullptr;
  auto Cs = operandElements(Addr.Elements[0]);
  unsigned Dims = Geom & 0xf;
  bool IsLayered = Geom & Layered;
  if (Cs.size() < Dims + IsLayered)
    return nullptr;
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), 4, 0);
  auto Put = [&](unsigned Slot, llvm::Value *V) { B.CreateStore(V, B.CreateConstGEP1_32(B.getInt32Ty(), Buf, Slot)); };
  Put(0, IsLayered ? L.read(*Cs[0], ScalarType::B32) : B.getInt32(0));
  for (unsigned A = 0; A < 3; ++A)
    Put(1 + A,
        A < Dims ? L.read(*Cs[IsLayered + A], CType == ScalarType::F32 ? ScalarType::B32 : CType) : B.getInt32(0));
  return Buf;
}

/// Writes the four i32 results in Out to the destination vector of I as DType.
void writeResults(FunctionLowering &L, const ptx::Operand &Dst, llvm::Value *Out, ScalarType DType) {
  auto &B = L.b();
  auto Ds = operandElements(Dst);
  for (unsigned K = 0; K < 4 && K < Ds.size(); ++K) {
    llvm::Value *V = B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt32Ty(), Out, K));
    if (DType == ScalarType::F32)
      L.write(*Ds[K], ScalarType::F32, B.CreateBitCast(V, B.getFloatTy()));
    else
      L.write(*Ds[K], DType, V);
  }
}

/// tex.level's LOD or tex.grad's gradients into an 8 x i32 scratch buffer: the LOD in slot 0, or the x gradient
/// in slots 0..2 and the y gradient in 4..6 (as many components as the geometry has dimensions).
llvm::Value *levelOfDetail(FunctionLowering &L, const ptx::Instruction &I, uint32_t Geom) {
  auto &B = L.b();
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), 8, 2);
  auto Put = [&](unsigned Slot, llvm::Value *V) { B.CreateStore(V, B.CreateConstGEP1_32(B.getInt32Ty(), Buf, Slot)); };
  if (I.has(Modifier::Level)) {
    Put(0, L.read(I.Operands[2], ScalarType::B32));
    return Buf;
  }
  for (unsigned G = 0; G < 2; ++G) {
    auto Cs = operandElements(I.Operands[2 + G]);
    for (unsigned A = 0; A < 3; ++A)
      Put(4 * G + A, A < (Geom & 0xf) && A < Cs.size() ? L.read(*Cs[A], ScalarType::B32) : B.getInt32(0));
  }
  return Buf;
}

bool lowerTex(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  uint32_t Geom = geometry(I);
  ScalarType DType = I.type(0), CType = I.type(1);
  bool Level = I.has(Modifier::Level), Grad = I.has(Modifier::Grad);
  if (!Geom || I.vectorWidth() != 4 || I.Operands.size() != 2u + Level + 2u * Grad || (Level && Grad) ||
      (DType != ScalarType::F32 && DType != ScalarType::S32 && DType != ScalarType::U32) ||
      (CType != ScalarType::F32 && CType != ScalarType::S32))
    return L.unsupported(I, "only tex{,.level,.grad}.{1d,2d,3d,a1d,a2d,cube,acube}.v4.{f32,s32,u32}.{f32,s32} on a "
                            "texture object handle");
  if ((Geom & Cube) && CType != ScalarType::F32)
    return L.unsupported(I, "cubemap coordinates must be .f32");
  llvm::Value *H = handle(L, I.Operands[1]);
  llvm::Value *Coords = H ? coordinates(L, I.Operands[1], Geom, CType) : nullptr;
  if (!Coords)
    return L.unsupported(I, "texture references and the independent sampler mode");
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), 4, 1);
  llvm::Value *IntCoords = B.getInt32(CType == ScalarType::S32);
  if (Level || Grad)
    L.callHelper("ptxrt_tex_lod", B.getVoidTy(),
                 {L.threadCtx(), H, B.getInt32(Geom), IntCoords, Coords, B.getInt32(Grad), levelOfDetail(L, I, Geom),
                  Out, location(L, I)});
  else
    L.callHelper("ptxrt_tex", B.getVoidTy(),
                 {L.threadCtx(), H, B.getInt32(Geom), IntCoords, Coords, Out, location(L, I)});
  writeResults(L, I.Operands[0], Out, DType);
  return true;
}

bool lowerTld4(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  uint32_t Geom = geometry(I);
  ScalarType DType = I.type(0);
  int Comp = I.has(Modifier::R) ? 0 : I.has(Modifier::G) ? 1 : I.has(Modifier::B) ? 2 : I.has(Modifier::A) ? 3 : -1;
  if ((Geom != 2 && Geom != (2 | Layered)) || Comp < 0 || I.Operands.size() != 2 || I.type(1) != ScalarType::F32)
    return L.unsupported(I, "only tld4.{r,g,b,a}.{2d,a2d}.v4.*.f32 on a texture object handle");
  llvm::Value *H = handle(L, I.Operands[1]);
  llvm::Value *Coords = H ? coordinates(L, I.Operands[1], Geom, ScalarType::F32) : nullptr;
  if (!Coords)
    return L.unsupported(I, "texture references and the independent sampler mode");
  llvm::Value *Out = scratchBuffer(L, B.getInt32Ty(), 4, 1);
  L.callHelper("ptxrt_tld4", B.getVoidTy(),
               {L.threadCtx(), H, B.getInt32(Geom), B.getInt32(Comp), Coords, Out, location(L, I)});
  writeResults(L, I.Operands[0], Out, DType);
  return true;
}

/// txq/suq's query, numbered as exec/TextureHelpers.cpp's Query; -1 for none.
int queryOf(const ptx::Instruction &I) {
  static const Modifier Order[] = {Modifier::Width,           Modifier::Height,       Modifier::Depth,
                                   Modifier::ChannelDataType, Modifier::ChannelOrder, Modifier::NormalizedCoords,
                                   Modifier::FilterMode,      Modifier::AddrMode0,    Modifier::AddrMode1,
                                   Modifier::AddrMode2,       Modifier::ArraySize,    Modifier::NumMipmapLevels,
                                   Modifier::NumSamples,      Modifier::MemoryLayout};
  for (unsigned K = 0; K < std::size(Order); ++K)
    if (I.has(Order[K]))
      return static_cast<int>(K);
  return -1;
}

bool lowerQuery(FunctionLowering &L, const ptx::Instruction &I, const char *Helper) {
  auto &B = L.b();
  int Q = queryOf(I);
  bool Level = I.has(Modifier::Level); // txq.level.{width,height,depth} d, [t], lod: the extent of a mipmap level
  llvm::Value *H = I.Operands.size() == 2u + Level ? handle(L, I.Operands[1]) : nullptr;
  if (Q < 0 || !H || (Level && (Q > 2 || I.Op != Opcode::Txq)))
    return L.unsupported(I, "only queries of an object handle in a register");
  llvm::Value *V =
      Level ? L.callHelper("ptxrt_txq_level", B.getInt32Ty(),
                           {L.threadCtx(), H, B.getInt32(Q), L.read(I.Operands[2], ScalarType::B32), location(L, I)})
            : L.callHelper(Helper, B.getInt32Ty(), {L.threadCtx(), H, B.getInt32(Q), location(L, I)});
  L.write(I.Operands[0], ScalarType::B32, V);
  return true;
}

/// Surface boundary mode (exec/TextureHelpers.cpp's Boundary): trap unless .clamp or .zero.
uint32_t boundary(const ptx::Instruction &I) { return I.has(Modifier::Clamp) ? 1 : I.has(Modifier::Zero) ? 2 : 0; }

/// suld.b / sust.b: bytes of one access (vector width x element), or 0 for forms this lowering lacks.
unsigned surfaceBytes(const ptx::Instruction &I) {
  unsigned Elem = ptx::bitWidth(I.type()) / 8;
  if (!I.has(Modifier::B) || !geometry(I) || (geometry(I) & Cube) || !Elem)
    return 0;
  return Elem * I.vectorWidth();
}

/// A surface access's handle and coordinates (from `[handle, {coords}]`, operand Addr), or nulls when it is not
/// a `.b` access on a surface object handle.
std::pair<llvm::Value *, llvm::Value *> surfaceAddress(FunctionLowering &L, const ptx::Instruction &I, unsigned Addr) {
  llvm::Value *H = I.Operands.size() == 2 && surfaceBytes(I) ? handle(L, I.Operands[Addr]) : nullptr;
  return {H, H ? coordinates(L, I.Operands[Addr], geometry(I), ScalarType::S32) : nullptr};
}

/// sust.p: a formatted store of up to four .b32 values at a sample (not byte) x coordinate; the helper converts
/// them to the surface's channel format.
bool lowerFormattedStore(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  uint32_t Geom = geometry(I);
  llvm::Value *H = I.Operands.size() == 2 && Geom && !(Geom & Cube) && ptx::bitWidth(I.type()) == 32
                       ? handle(L, I.Operands[0])
                       : nullptr;
  llvm::Value *Coords = H ? coordinates(L, I.Operands[0], Geom, ScalarType::S32) : nullptr;
  if (!Coords)
    return L.unsupported(I, "only sust.p.{1d,2d,3d,a1d,a2d}.b32 on a surface object handle");
  auto Data = operandElements(I.Operands[1]);
  const unsigned N = std::min<unsigned>(static_cast<unsigned>(Data.size()), std::max(1u, I.vectorWidth()));
  llvm::Value *Buf = scratchBuffer(L, B.getInt32Ty(), 4, 1);
  for (unsigned K = 0; K < N; ++K)
    B.CreateStore(L.read(*Data[K], ScalarType::B32), B.CreateConstGEP1_32(B.getInt32Ty(), Buf, K));
  L.callHelper(
      "ptxrt_sust_p", B.getVoidTy(),
      {L.threadCtx(), H, B.getInt32(Geom), B.getInt32(boundary(I)), B.getInt32(N), Coords, Buf, location(L, I)});
  return true;
}

/// suld.b (Store false: the data operand is the destination) or sust.b (Store: the data operand is the source):
/// the data goes through a scratch buffer of up to four 64-bit slots that the helper reads or fills.
bool lowerSurfaceAccess(FunctionLowering &L, const ptx::Instruction &I, bool Store) {
  auto &B = L.b();
  unsigned Bytes = surfaceBytes(I);
  auto [H, Coords] = surfaceAddress(L, I, Store ? 0 : 1);
  if (!Coords)
    return L.unsupported(I, Store ? "only sust.b on a surface object handle (sust.p's formatted stores are not lowered)"
                                  : "only suld.b on a surface object handle");
  ScalarType T = I.type();
  llvm::Type *Ty = L.bitsType(T);
  llvm::Value *Buf = scratchBuffer(L, B.getInt64Ty(), 4, 1);
  auto Data = operandElements(I.Operands[Store ? 1 : 0]);
  const size_t N = std::min<size_t>(Data.size(), I.vectorWidth());
  for (unsigned K = 0; Store && K < N; ++K)
    B.CreateStore(L.read(*Data[K], T), B.CreateConstGEP1_32(Ty, Buf, K));
  L.callHelper(Store ? "ptxrt_sust" : "ptxrt_suld", B.getVoidTy(),
               {L.threadCtx(), H, B.getInt32(geometry(I)), B.getInt32(boundary(I)), B.getInt32(Bytes), Coords, Buf,
                location(L, I)});
  for (unsigned K = 0; !Store && K < N; ++K)
    L.write(*Data[K], T, B.CreateLoad(Ty, B.CreateConstGEP1_32(Ty, Buf, K)));
  return true;
}

bool lowerSured(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  int Op = I.has(Modifier::Add)   ? 0
           : I.has(Modifier::Min) ? 1
           : I.has(Modifier::Max) ? 2
           : I.has(Modifier::And) ? 3
           : I.has(Modifier::Or)  ? 4
                                  : -1;
  int Type = T == ScalarType::U32 || T == ScalarType::B32   ? 0
             : T == ScalarType::S32                         ? 1
             : T == ScalarType::U64 || T == ScalarType::B64 ? 2
             : T == ScalarType::S64                         ? 3
                                                            : -1;
  uint32_t Geom = geometry(I);
  bool Formatted = I.has(Modifier::P); // sured.p: x counts samples, the format's signedness decides min/max
  llvm::Value *H = I.Operands.size() == 2 && (I.has(Modifier::B) || Formatted) && Op >= 0 && Type >= 0 && Geom &&
                           !(Geom & (Layered | Cube))
                       ? handle(L, I.Operands[0])
                       : nullptr;
  llvm::Value *Coords = H ? coordinates(L, I.Operands[0], Geom, ScalarType::S32) : nullptr;
  if (!Coords)
    return L.unsupported(I, "only sured.{b,p}.{add,min,max,and,or}.{1d,2d,3d} on a surface object handle");
  llvm::Value *V = B.CreateZExtOrTrunc(L.read(I.Operands[1], T), B.getInt64Ty());
  L.callHelper("ptxrt_sured", B.getVoidTy(),
               {L.threadCtx(), H, B.getInt32(Geom), B.getInt32(boundary(I)),
                B.getInt32(Formatted << 8 | Op << 4 | Type), Coords, V, location(L, I)});
  return true;
}

/// istypep.{texref,samplerref,surfref} p, a: an H100/H200's code (driver 580) tests bit 61, 62 or 63 of the 64-bit
/// value, and nothing else (tests/conformance/texture/istypep). The handles cuTexObjectCreate and cuSurfObjectCreate
/// return there are small integers, as ptxforge's are, so every type test of an object's handle is false on both.
bool lowerIstypep(FunctionLowering &L, const ptx::Instruction &I) {
  auto &B = L.b();
  ScalarType T = I.type();
  unsigned Bit = T == ScalarType::TexRef ? 61 : T == ScalarType::SamplerRef ? 62 : 63;
  if (I.Operands.size() != 2 || (Bit == 63 && T != ScalarType::SurfRef))
    return L.unsupported(I, "operands");
  llvm::Value *V = L.read(I.Operands[1], ScalarType::B64);
  L.write(I.Operands[0], ScalarType::Pred, B.CreateICmpNE(B.CreateAnd(V, B.getInt64(1ull << Bit)), B.getInt64(0)));
  return true;
}

} // namespace

bool ptxforge::codegen::detail::lowerTexture(FunctionLowering &L, const ptx::Instruction &I) {
  switch (I.Op) {
  case Opcode::Tex:
    return lowerTex(L, I);
  case Opcode::Tld4:
    return lowerTld4(L, I);
  case Opcode::Txq:
    return lowerQuery(L, I, "ptxrt_txq");
  case Opcode::Suq:
    return lowerQuery(L, I, "ptxrt_suq");
  case Opcode::Suld:
    return lowerSurfaceAccess(L, I, /*Store=*/false);
  case Opcode::Sust:
    return I.has(Modifier::P) ? lowerFormattedStore(L, I) : lowerSurfaceAccess(L, I, /*Store=*/true);
  case Opcode::Sured:
    return lowerSured(L, I);
  case Opcode::Istypep:
    return lowerIstypep(L, I);
  default:
    return false;
  }
}
