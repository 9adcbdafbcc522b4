// PTX numeric literal parsing shared by the IR builder and the verifier.
#include "Literals.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ptxforge::ptx;
using namespace ptxforge::ptx::detail;

bool ptxforge::ptx::detail::parseIntLiteral(llvm::StringRef S, IntLiteral &Out) {
  Out = IntLiteral();
  if (S.consume_back("U"))
    Out.Unsigned = true;
  unsigned Radix = 10;
  if (S.size() > 2 && (S.starts_with("0x") || S.starts_with("0X"))) {
    Radix = 16;
    S = S.drop_front(2);
    Out.Format = IntFormat::Hex;
  } else if (S.size() > 2 && (S.starts_with("0b") || S.starts_with("0B"))) {
    Radix = 2;
    S = S.drop_front(2);
    Out.Format = IntFormat::Binary;
  } else if (S.size() > 1 && S[0] == '0') {
    Radix = 8;
    S = S.drop_front(1);
    Out.Format = IntFormat::Octal;
  }
  if (S.empty())
    return false;
  // getAsInteger rejects values over 64 bits, which is the overflow check we want.
  return !S.getAsInteger(Radix, Out.Value);
}

bool ptxforge::ptx::detail::parseFloatLiteral(llvm::StringRef S, FloatLiteral &Out) {
  Out = FloatLiteral();
  if (S.size() == 10 && (S.starts_with("0f") || S.starts_with("0F"))) {
    Out.Kind = ImmediateKind::F32Bits;
    return !S.drop_front(2).getAsInteger(16, Out.Bits);
  }
  if (S.size() == 18 && (S.starts_with("0d") || S.starts_with("0D"))) {
    Out.Kind = ImmediateKind::F64Bits;
    return !S.drop_front(2).getAsInteger(16, Out.Bits);
  }
  if (S.size() > 64)
    return false;
  std::string Copy = S.str();
  char *End = nullptr;
  errno = 0;
  Out.Decimal = std::strtod(Copy.c_str(), &End);
  Out.Kind = ImmediateKind::Decimal;
  std::memcpy(&Out.Bits, &Out.Decimal, 8);
  // Past the f64 range either way: ptxas rejects 1e400 and 1e-310 alike ("Constant overflow"), not 0e-400.
  Out.Overflow = errno == ERANGE;
  return End && *End == 0 && !Out.Overflow;
}

uint64_t ptxforge::ptx::detail::literalBits(const FloatLiteral &L, bool Negate) {
  switch (L.Kind) {
  case ImmediateKind::F32Bits:
    return Negate ? L.Bits ^ 0x80000000u : L.Bits;
  case ImmediateKind::F64Bits:
  case ImmediateKind::Decimal:
  case ImmediateKind::Int:
    return Negate ? L.Bits ^ 0x8000000000000000ull : L.Bits;
  }
  return L.Bits;
}
