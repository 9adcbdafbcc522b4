// The smallest C++ embedding: compile one kernel, run it, check the value it stored.
#include <ptxforge/ptxforge.hpp>

#include <cstdio>

static const char *Ptx = ".version 8.0\n.target sm_70\n.address_size 64\n"
                         ".visible .entry put(.param .u64 out, .param .u32 v)\n{\n"
                         "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
                         "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [v];\n"
                         "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

int main() {
  auto P = ptxforge::Program::fromText(Ptx, "put.ptx");
  auto D = ptxforge::Device::create();
  if (!P || !D)
    return 1;
  auto X = D->compile(*P);
  auto B = D->allocate(4);
  if (!X || !B)
    return 1;
  auto K = X->kernel("put");
  if (!K || !K->run({{1}, {1}}, ptxforge::Arguments::of(*B, 1234u)))
    return 1;
  auto V = B->read<unsigned>(1);
  std::printf("C++ consumer: ptxforge %s, put stored %u\n", ptxforge::version(), V ? (*V)[0] : 0u);
  return V && (*V)[0] == 1234u ? 0 : 1;
}
