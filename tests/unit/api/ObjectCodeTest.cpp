// Ahead-of-time compilation through the embedding API: an object for an x86-64 ISA level, loaded and run on
// the device; its serialized form; a fatbinary with its host-native entry that the ptxforge CLI runs.
#include "TestKernels.h"

#include "ptxforge/ptxforge.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace ptxforge;

namespace {

ObjectCode baselineObject() {
  auto P = Program::fromText(testing::ApiKernelsPtx, "kernels.ptx");
  REQUIRE(P.ok());
  ObjectOptions O;
  O.Target = {8, 0};
  O.Cpu = "x86-64";
  auto Obj = ObjectCode::compile(*P, O);
  REQUIRE_MESSAGE(Obj.ok(), Obj.error().toString());
  return *Obj;
}

} // namespace

TEST_CASE("an object compiled ahead of time loads and runs") {
  ObjectCode Obj = baselineObject();
  CHECK(Obj.cpu() == "x86-64");
  CHECK(Obj.target().value() == 80);
  CHECK(Obj.objectFile().compare(0, 4,
                                 "\x7f"
                                 "ELF") == 0);
  CHECK(Obj.serialize().size() > Obj.objectFile().size());
  CHECK(Obj.checkRunsOnHost().ok());

  auto D = Device::create();
  REQUIRE(D.ok());
  auto X = D->load(Obj);
  REQUIRE_MESSAGE(X.ok(), X.error().toString());
  CHECK(X->target().value() == 80);
  auto K = X->kernel("store");
  REQUIRE(K.ok());
  CHECK(K->parameters()[0].IsPointer);
  auto B = D->allocate(4);
  REQUIRE(B.ok());
  REQUIRE(K->run({{1}, {1}}, Arguments::of(*B, 31u)).ok());
  CHECK((*B->read<uint32_t>(1))[0] == 31);
}

TEST_CASE("objects are refused for targets the module cannot run on and CPUs that are not ISA levels") {
  auto P = Program::fromText(testing::Sm80Ptx, "sum.ptx");
  REQUIRE(P.ok());
  ObjectOptions O;
  O.Target = {7, 5};
  auto Obj = ObjectCode::compile(*P, O);
  REQUIRE_FALSE(Obj.ok());
  CHECK(Obj.error().code() == ErrorCode::UnsupportedTarget);
  O.Target = {9, 0};
  O.OptLevel = 4;
  CHECK(ObjectCode::compile(*P, O).error().code() == ErrorCode::InvalidArgument);
  O.OptLevel = 2;
  auto Host = ObjectCode::compile(*P, O); // this CPU, named as LLVM names it
  REQUIRE(Host.ok());
  CHECK(Host->checkRunsOnHost().ok());
  CHECK(Host->fatbinary().error().code() == ErrorCode::NotSupported);
}

TEST_CASE("a fatbinary with a host-native entry runs through the CLI") {
  auto Fatbin = baselineObject().fatbinary();
  REQUIRE(Fatbin.ok());
  REQUIRE(Fatbin->size() > 16);
  uint32_t Magic = 0;
  std::memcpy(&Magic, Fatbin->data(), 4);
  CHECK(Magic == 0xBA55ED50u);

  std::filesystem::path Dir = std::filesystem::temp_directory_path() / "ptxforge-api-fatbin";
  std::filesystem::create_directories(Dir);
  std::string Path = (Dir / "kernels.fatbin").string(), Out = (Dir / "out.bin").string();
  std::ofstream(Path, std::ios::binary).write(reinterpret_cast<const char *>(Fatbin->data()), Fatbin->size());
  std::string Command = std::string(PTXFORGE_CLI) + " run " + Path +
                        " --entry store --grid 1,1,1 --block 1,1,1 --arg buffer:4,zero,out=" + Out +
                        " --arg u32:4242 > /dev/null";
  REQUIRE(std::system(Command.c_str()) == 0);
  uint32_t Value = 0;
  std::ifstream(Out, std::ios::binary).read(reinterpret_cast<char *>(&Value), 4);
  CHECK(Value == 4242);
  std::filesystem::remove_all(Dir);
}
