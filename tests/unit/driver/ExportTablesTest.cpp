// The core of cuGetExportTable's tables: MD2 and HMAC-MD2 (the integrity check's hash), the integrity token's
// constant answers, and context-local storage with its destructors.
#include "ptxforge/driver/ExportTables.h"
#include "ptxforge/driver/Context.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

using namespace ptxforge::driver;

namespace {
std::string hex(const std::array<uint8_t, 16> &D) {
  std::string S;
  char B[3];
  for (uint8_t V : D) {
    std::snprintf(B, sizeof B, "%02x", V);
    S += B;
  }
  return S;
}
llvm::ArrayRef<uint8_t> bytes(const char *S) {
  return llvm::ArrayRef(reinterpret_cast<const uint8_t *>(S), std::char_traits<char>::length(S));
}
} // namespace

TEST_CASE("MD2 gives RFC 1319's test vectors") {
  CHECK(hex(md2(bytes(""))) == "8350e5a3e24c153df2275c9f80692773");
  CHECK(hex(md2(bytes("a"))) == "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  CHECK(hex(md2(bytes("abc"))) == "da853b0d3f88d99b30283a69e6ded6bb");
  CHECK(hex(md2(bytes("message digest"))) == "ab4f496bfb2a530b219ff33031fe06b0");
  CHECK(hex(md2(bytes("abcdefghijklmnopqrstuvwxyz"))) == "4e8ddff3650292ab5a4108c3aa47940b");
}

TEST_CASE("HMAC-MD2 hashes the key's inner and outer pads with the message") {
  uint8_t Key[16];
  for (int I = 0; I < 16; ++I)
    Key[I] = uint8_t(I);
  // The value of an independent implementation (a script following RFC 1319 and RFC 2104).
  CHECK(hex(hmacMd2(Key, bytes("ptxforge"))) == "55e9254b31539a59db48b5cce5a109a2");
}

TEST_CASE("the integrity token is a constant for runtime versions ending in 0 or 1, else depends on the inputs") {
  IntegrityInputs In;
  In.RuntimeVersion = 13000;
  CHECK(integrityToken(In)[0] == 0x3341181C03CB675Cull);
  In.RuntimeVersion = 13001;
  CHECK(integrityToken(In)[0] == 0x1841181C03CB675Cull);
  CHECK(integrityToken(In)[1] == 0x8ED383AA1F4CD1E8ull);
  In.RuntimeVersion = 13002;
  In.Devices.push_back({});
  auto A = integrityToken(In);
  In.UnixSeconds = 1;
  CHECK(integrityToken(In) != A);
  In.UnixSeconds = 0;
  CHECK(integrityToken(In) == A);
  In.Devices[0].PciBus = 1;
  CHECK(integrityToken(In) != A);
}

namespace {
struct Destroyed {
  void *Context = nullptr, *Key = nullptr, *Value = nullptr;
  int Calls = 0;
} LastDestroyed;
void recordDestroy(void *Context, void *Key, void *Value) {
  LastDestroyed = {Context, Key, Value, LastDestroyed.Calls + 1};
}
} // namespace

TEST_CASE("context-local storage keeps a value per key and calls its destructor when the context is destroyed") {
  Context C(0, 0, /*Primary=*/false);
  int KeyA = 0, KeyB = 0, Value = 0;
  CHECK(!C.getLocal(&KeyA));
  C.putLocal(&KeyA, &Value, recordDestroy);
  C.putLocal(&KeyB, nullptr, nullptr);
  REQUIRE(C.getLocal(&KeyA));
  CHECK(*C.getLocal(&KeyA) == &Value);
  CHECK(C.eraseLocal(&KeyB));
  CHECK(!C.eraseLocal(&KeyB));
  C.destroy();
  CHECK(LastDestroyed.Calls == 1);
  CHECK(LastDestroyed.Context == &C);
  CHECK(LastDestroyed.Key == &KeyA);
  CHECK(LastDestroyed.Value == &Value);
  CHECK(!C.getLocal(&KeyA)); // destroy() empties the storage: a revived primary context starts without it
}
