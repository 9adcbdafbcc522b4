// Unit tests of the PTX front end: the IR the parser builds, the opcode table's consistency, hostile inputs.
#include "ptxforge/ptx/Frontend.h"
#include "ptxforge/ptx/Architectures.h"
#include "ptxforge/ptx/OpcodeInfo.h"
#include "ptxforge/ptx/Printer.h"
#include "ptxforge/ptx/Requirements.h"

#include <doctest/doctest.h>

#include <random>

using namespace ptxforge::ptx;

namespace {
std::unique_ptr<FrontendResult> run(const std::string &Text, unsigned Threads = 1) {
  ParseOptions O;
  O.Threads = Threads;
  return runFrontend(std::make_unique<SourceBuffer>("t.ptx", Text), O);
}

std::string diags(const FrontendResult &R) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  R.Diags.print(*R.Source, OS);
  return S;
}

const char *Header = ".version 8.0\n.target sm_80\n.address_size 64\n";
} // namespace

TEST_CASE("the opcode table names only known modifiers and types and has a row per opcode") {
  std::vector<std::string> Problems = checkOpcodeTable();
  for (const std::string &P : Problems)
    MESSAGE(P);
  CHECK(Problems.empty());
}

TEST_CASE("parser builds typed IR") {
  auto R = run(std::string(Header) + R"(
.global .align 4 .u32 counter = 7;
.visible .entry k(.param .u64 .ptr.global.align 16 out, .param .f32 a)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1|%p0, %r1, 32;
  @!%p1 bra $L_end;
  add.rn.f32 %f1, %f2, 0f3F800000;
  st.global.v2.u32 [%rd1+-8], {%r1, %r2};
$L_end:
  ret;
}
)");
  INFO(diags(*R));
  REQUIRE(R->ok());
  const Module &M = *R->module();
  CHECK(M.Version.value() == 80);
  CHECK(M.Tgt.Sm == 80);
  REQUIRE(M.Globals.size() == 1);
  CHECK(M.Globals[0].Init.Bits == 7);
  REQUIRE(M.Functions.size() == 1);
  const Function &F = *M.Functions[0];
  CHECK(F.IsEntry);
  REQUIRE(F.Sig.Params.size() == 2);
  CHECK(F.Sig.Params[0].IsPtr);
  CHECK(F.Sig.Params[0].PtrSpace == StateSpace::Global);
  CHECK(F.Sig.Params[0].PtrAlign == 16);
  CHECK(F.Registers.size() == 2 + 4 + 3 + 3);
  REQUIRE(F.Instructions.size() == 7);
  const Instruction &Setp = F.Instructions[2];
  CHECK(Setp.Op == Opcode::Setp);
  CHECK(Setp.Operands[0].Kind == OperandKind::RegPair);
  const Instruction &Bra = F.Instructions[3];
  CHECK(Bra.GuardNegated);
  CHECK(Bra.Operands[0].Target.Kind == SymbolKind::Label);
  const Instruction &Add = F.Instructions[4];
  CHECK(Add.has(Modifier::Rn));
  CHECK(Add.type() == ScalarType::F32);
  CHECK(Add.Operands[2].ImmKind == ImmediateKind::F32Bits);
  CHECK(Add.Operands[2].Bits == 0x3F800000u);
  const Instruction &St = F.Instructions[5];
  CHECK(St.vectorWidth() == 2);
  CHECK(St.Operands[0].Kind == OperandKind::Address);
  CHECK(St.Operands[0].offset() == -8);
  CHECK(St.Operands[1].Kind == OperandKind::Vector);
  CHECK(St.Operands[1].Elements.size() == 2);
  CHECK(F.Instructions[1].Operands[1].Kind == OperandKind::Special);
  CHECK(F.Instructions[1].Operands[1].Sreg == SpecialReg::Tid);
}

TEST_CASE("ue4m3 is an instruction type: mxf4nvf4's scale_vec::4X scales, sm_120 and PTX 8.7 on, never a variable's") {
  std::string Mma =
      "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 "
      "{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3}, %sa, {0, 0}, %sb, {0, 0};";
  std::string Body = ".entry k() { .reg .b32 %a<4>, %b<2>, %f<4>, %d<4>, %sa, %sb; " + Mma + " ret; }\n";
  auto R = run(".version 8.7\n.target sm_120a\n.address_size 64\n" + Body);
  INFO(diags(*R));
  REQUIRE(R->ok());
  const Instruction &I = R->module()->Functions[0]->Instructions[0];
  REQUIRE(I.typeCount() == 5);
  CHECK(I.type(4) == ScalarType::UE4M3);
  auto Old = run(".version 8.7\n.target sm_90a\n.address_size 64\n" + Body);
  CHECK_FALSE(Old->ok());
  CHECK(diags(*Old).find("sm_120") != std::string::npos);
  auto Var = run(".version 8.7\n.target sm_120a\n.address_size 64\n.entry k() { .reg .ue4m3 %s; ret; }\n");
  CHECK_FALSE(Var->ok());
  CHECK(diags(*Var).find("type .ue4m3 may only be used as an instruction type") != std::string::npos);
}

TEST_CASE("printing is a fixed point") {
  auto R = run(std::string(Header) + R"(
.global .align 8 .u64 tab[2] = {generic(tab), 3};
.func (.param .b32 r) f(.param .b32 a) { .reg .b32 %x; ld.param.b32 %x, [a]; st.param.b32 [r], %x; ret; }
.entry e() { .reg .b32 %r<2>; { .param .b32 p; .param .b32 q; st.param.b32 [p], 1;
  call.uni (q), f, (p); ld.param.b32 %r1, [q]; } ret; }
)");
  INFO(diags(*R));
  REQUIRE(R->ok());
  std::string A, B;
  llvm::raw_string_ostream OA(A), OB(B);
  printModule(*R->module(), OA);
  auto R2 = run(A);
  INFO(diags(*R2));
  REQUIRE(R2->ok());
  printModule(*R2->module(), OB);
  CHECK(A == B);
}

TEST_CASE("requirements name the instruction that sets them") {
  auto R = run(".version 8.0\n.target sm_75\n.address_size 64\n"
               ".entry k() { .reg .b32 %r<3>; redux.sync.add.u32 %r1, %r2, -1; ret; }\n");
  CHECK_FALSE(R->ok());
  CHECK(diags(*R).find("requires sm_80") != std::string::npos);
  auto Ok = run(std::string(Header) + ".entry k() { .reg .b32 %r<3>; redux.sync.add.u32 %r1, %r2, -1; ret; }\n");
  REQUIRE(Ok->ok());
  ModuleRequirements MR = computeRequirements(*Ok->module());
  CHECK(MR.Minimum.Sm == 80);
  REQUIRE(MR.Functions.size() == 1);
  REQUIRE(!MR.Functions[0].SmSetBy.empty());
  CHECK(MR.Functions[0].SmSetBy[0].Instruction == "redux.sync.add.u32");
  CHECK(reasonsCannotRun(*Ok->module(), MR, 75).size() == 2);
  CHECK(reasonsCannotRun(*Ok->module(), MR, 90).empty());
}

TEST_CASE("one rule for a module's .target: a device runs its own architecture's targets, a compile keeps suffixes") {
  CHECK(targetAllows(80, 0, 90, 0));
  CHECK_FALSE(targetAllows(90, 0, 80, 'a'));
  CHECK(targetAllows(90, 'a', 90, 'a'));
  CHECK_FALSE(targetAllows(90, 'a', 90, 0)); // compute_90 PTX may run on later devices
  CHECK(targetAllows(100, 'f', 103, 'f'));
  CHECK_FALSE(targetAllows(100, 'f', 120, 'f'));
  CHECK_FALSE(targetAllows(103, 'f', 100, 'a'));
  auto M = run(".version 8.0\n.target sm_90a\n.address_size 64\n.entry k() { ret; }\n");
  REQUIRE(M->ok());
  ModuleRequirements MR = computeRequirements(*M->module());
  CHECK(reasonsCannotRun(*M->module(), MR, 90).empty());
  CHECK(reasonsCannotRun(*M->module(), MR, 100) == std::vector<std::string>{"'.target sm_90a' runs only on sm_90"});
  CHECK(reasonsCannotRun(*M->module(), MR, 80) == std::vector<std::string>{"'.target sm_90a' is higher than sm_80"});
  CHECK(reasonsCannotCompile(*M->module(), MR, 90, 'a', "compute_90a").empty());
  CHECK(reasonsCannotCompile(*M->module(), MR, 90, 0, "compute_90") ==
        std::vector<std::string>{"'.target sm_90a' is specific to sm_90: it compiles only for compute_90a"});
}

TEST_CASE("the architecture table knows the default device, which no .target names") {
  CHECK(isDeviceArchitecture(DefaultDeviceSm));
  CHECK_FALSE(isKnownSm(DefaultDeviceSm));
  CHECK(ptxVersionForTarget(DefaultDeviceSm, 0) == 0);
  CHECK(isKnownSm(121));
  CHECK(isDeviceArchitecture(121));
  CHECK_FALSE(isDeviceArchitecture(131));
  auto M = run(".version 9.0\n.target sm_130\n.address_size 64\n.entry k() { ret; }\n");
  CHECK_FALSE(M->ok());
}

TEST_CASE("diagnostics are located and several are reported") {
  auto R = run(std::string(Header) + ".entry k() {\n  add.s32 %r1, %r2, %r3;\n  bra $nowhere;\n  frob.x %r1;\n}\n");
  CHECK_FALSE(R->ok());
  std::string D = diags(*R);
  CHECK(D.find("t.ptx:5:11: error: use of undeclared register '%r1'") != std::string::npos);
  CHECK(R->Diags.errorCount() >= 2);
}

TEST_CASE("hostile inputs fail fast with diagnostics") {
  SUBCASE("random bytes") {
    std::mt19937 Rng(1);
    for (int I = 0; I < 200; ++I) {
      std::string S(Rng() % 4096, '\0');
      for (char &C : S)
        C = static_cast<char>(Rng());
      auto R = run(S);
      CHECK_FALSE(R->ok());
    }
  }
  SUBCASE("deep nesting") {
    auto R = run(std::string(Header) + ".entry k() " + std::string(100000, '{'));
    CHECK_FALSE(R->ok());
    CHECK(diags(*R).find("nesting deeper") != std::string::npos);
  }
  SUBCASE("a 2^31 register count is rejected, a million registers are fine") {
    auto Huge = run(std::string(Header) + ".entry k() { .reg .b32 %r<2147483648>; ret; }");
    CHECK(diags(*Huge).find("register count") != std::string::npos);
    auto Many = run(std::string(Header) + ".entry k() { .reg .b32 %r<1000000>; mov.b32 %r999999, 1; ret; }");
    INFO(diags(*Many));
    CHECK(Many->ok());
  }
  SUBCASE("a 100 MB line") {
    std::string S = std::string(Header) + ".entry k() { ret; } // " + std::string(100u << 20, 'x') + "\n";
    auto R = run(S, 2);
    CHECK(R->ok());
    auto Bad = run(std::string(Header) + std::string(50u << 20, 'a'), 2);
    CHECK_FALSE(Bad->ok());
  }
  SUBCASE("truncated module") {
    auto R = run(std::string(Header) + ".entry k() { .reg .b32 %r<2>; add.s32 %r1, ");
    CHECK_FALSE(R->ok());
  }
}
