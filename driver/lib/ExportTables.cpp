// The integrity check of the runtime/driver handshake (see ExportTables.h): HMAC over MD2. The layout of the
// hashed bytes is the runtime's (a packed little-endian record of the request and process, then one record per
// device); docs/export-tables.md says where it comes from.
#include "ptxforge/driver/ExportTables.h"

#include <nettle/md2.h>

#include <cstring>

using namespace ptxforge::driver;

namespace {

/// MD2 (RFC 1319) from Debian's nettle.
class Md2 {
public:
  Md2() { md2_init(&Ctx); }
  void update(llvm::ArrayRef<uint8_t> Bytes) { md2_update(&Ctx, Bytes.size(), Bytes.data()); }
  std::array<uint8_t, 16> finish() {
    std::array<uint8_t, 16> Digest;
    md2_digest(&Ctx, Digest.size(), Digest.data());
    return Digest;
  }

private:
  md2_ctx Ctx;
};

template <class T> void append(std::vector<uint8_t> &Out, const T &V) {
  const auto *P = reinterpret_cast<const uint8_t *>(&V);
  Out.insert(Out.end(), P, P + sizeof(T));
}

} // namespace

std::array<uint8_t, 16> ptxforge::driver::md2(llvm::ArrayRef<uint8_t> Message) {
  Md2 H;
  H.update(Message);
  return H.finish();
}

std::array<uint8_t, 16> ptxforge::driver::hmacMd2(llvm::ArrayRef<uint8_t> Key, llvm::ArrayRef<uint8_t> Message) {
  uint8_t Inner[16], Outer[16];
  for (size_t I = 0; I < 16; ++I) {
    uint8_t K = I < Key.size() ? Key[I] : 0;
    Inner[I] = K ^ 0x36, Outer[I] = K ^ 0x5c;
  }
  Md2 H;
  H.update(Inner);
  H.update(Message);
  std::array<uint8_t, 16> InnerDigest = H.finish();
  Md2 O;
  O.update(Outer);
  O.update(InnerDigest);
  return O.finish();
}

std::array<uint64_t, 2> ptxforge::driver::integrityToken(const IntegrityInputs &In) {
  // Runtimes whose version ends in 0 or 1 take a fixed answer.
  if (In.RuntimeVersion % 10 == 0)
    return {0x3341181C03CB675Cull, 0x8ED383AA1F4CD1E8ull};
  if (In.RuntimeVersion % 10 == 1)
    return {0x1841181C03CB675Cull, 0x8ED383AA1F4CD1E8ull};
  static constexpr uint8_t Key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                      0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
  std::vector<uint8_t> Message;
  append(Message, In.DriverVersion);
  append(Message, In.RuntimeVersion);
  append(Message, In.ProcessId);
  append(Message, In.ThreadId);
  append(Message, In.RuntimeTable);
  append(Message, In.IntegrityTable);
  append(Message, In.CheckFunction);
  append(Message, In.UnixSeconds);
  for (const IntegrityDevice &D : In.Devices) {
    Message.insert(Message.end(), D.Uuid.begin(), D.Uuid.end());
    append(Message, D.PciDomain);
    append(Message, D.PciBus);
    append(Message, D.PciDevice);
  }
  std::array<uint8_t, 16> Digest = hmacMd2(Key, Message);
  std::array<uint64_t, 2> Token;
  std::memcpy(Token.data(), Digest.data(), 16);
  return Token;
}
