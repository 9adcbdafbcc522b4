// fatbin/Targets.h: compute capabilities in every spelling PTXFORGE_DEVICE_CC takes, and the -gencode plan of
// nvcc's target flags (the CLI's lit tests, tests/lit/compile, check the messages end to end).
#include "ptxforge/fatbin/Targets.h"

#include <doctest/doctest.h>

using namespace ptxforge::fatbin;

namespace {

unsigned cc(llvm::StringRef Text) {
  auto CC = parseComputeCapability(Text);
  REQUIRE_MESSAGE(static_cast<bool>(CC), llvm::toString(CC.takeError()));
  return *CC;
}

std::string ccError(llvm::StringRef Text) {
  auto CC = parseComputeCapability(Text);
  if (CC)
    return "parsed as " + std::to_string(*CC);
  return llvm::toString(CC.takeError());
}

} // namespace

TEST_CASE("a compute capability in each spelling") {
  CHECK(cc("90") == 90);
  CHECK(cc("9.0") == 90);
  CHECK(cc("sm_90") == 90);
  CHECK(cc("sm_90a") == 90); // the arch-specific target of a 9.0 device
  CHECK(cc("compute_90") == 90);
  CHECK(cc("compute_90a") == 90);
  CHECK(cc("sm_100f") == 100);
  CHECK(cc("10.3") == 103);
  CHECK(cc("103") == 103);
  CHECK(cc(" 8.6\n") == 86);
  CHECK(cc("sm_75") == 75);
}

TEST_CASE("what is no compute capability is an error naming it") {
  for (const char *Bad :
       {"", "9", "nine", "sm_", "sm_9.0", "9.10", "9.", ".0", "sm_90b", "90a", "2.0", "-90", "9.0,8.0"}) {
    CAPTURE(Bad);
    CHECK(ccError(Bad) == "'" + std::string(Bad) + "' is not a compute capability (expected e.g. 9.0, 90 or sm_90)");
  }
}

TEST_CASE("-arch shorthands and -arch=native as gencodes") {
  auto Sm80 = archGencodes("sm_80", "", 90);
  REQUIRE(static_cast<bool>(Sm80));
  REQUIRE(Sm80->size() == 1);
  CHECK((*Sm80)[0].spelling() == "-gencode arch=compute_80,code=[sm_80,compute_80]");
  auto Native = archGencodes("native", "", 86);
  REQUIRE(static_cast<bool>(Native));
  REQUIRE(Native->size() == 1);
  CHECK((*Native)[0].spelling() == "-gencode arch=compute_86,code=[sm_86,compute_86]");
  // A device newer than every architecture nvcc knows (ptxforge's default, 13.0) runs the newest one's PTX.
  auto Newer = archGencodes("native", "", 130);
  REQUIRE(static_cast<bool>(Newer));
  REQUIRE(Newer->size() == 1);
  CHECK((*Newer)[0].spelling() == "-gencode arch=compute_121,code=compute_121");
  auto Unsupported = archGencodes("native", "", 77);
  REQUIRE_FALSE(static_cast<bool>(Unsupported));
  CHECK(llvm::toString(Unsupported.takeError()) ==
        "-arch=native: compute capability 7.7 is not a supported architecture");
  auto None = archGencodes("", "", 90);
  REQUIRE(static_cast<bool>(None));
  CHECK(None->empty());
}

TEST_CASE("-gencode spellings") {
  auto G = parseGencode("arch=compute_100f,code=[sm_103f,compute_100f]");
  REQUIRE(static_cast<bool>(G));
  CHECK(G->Arch.name() == "compute_100f");
  REQUIRE(G->Codes.size() == 2);
  CHECK(G->Codes[0].name() == "sm_103f");
  CHECK(G->Codes[1].name() == "compute_100f");
  auto Bad = parseGencode("arch=compute_90a,code=sm_100a");
  REQUIRE_FALSE(static_cast<bool>(Bad));
  CHECK(llvm::toString(Bad.takeError()) ==
        "Incompatible code generation requested: arch='compute_90a', code='sm_100a'");
}
