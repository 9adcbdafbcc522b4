// Small helpers shared by the fatbin library's files: error values and hex formatting for messages, and the
// entry header's byte layout, which the reader and the writer share.
#pragma once

#include "ptxforge/fatbin/Format.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <type_traits>

namespace ptxforge::fatbin::detail {

inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

inline std::string hex(uint64_t V) {
  std::string S;
  llvm::raw_string_ostream(S) << llvm::format_hex(V, 0);
  return S;
}

/// Calls F(offset, field) for each field of an entry header (Format.h: EntryHeader) at its offset.
template <typename HeaderT, typename Fn> void forEachEntryHeaderField(HeaderT &H, Fn F) {
  F(0x00, H.Kind);
  F(0x02, H.FormatVersion);
  F(0x04, H.HeaderSize);
  F(0x08, H.PayloadSize);
  F(0x10, H.CompressedSize);
  F(0x14, H.OptionsOffset);
  F(0x18, H.MinorVersion);
  F(0x1a, H.MajorVersion);
  F(0x1c, H.Arch);
  F(0x20, H.NameOffset);
  F(0x24, H.NameSize);
  F(0x28, H.Flags);
  F(0x30, H.Reserved);
  F(0x38, H.UncompressedSize);
}

/// The little-endian integer type a header field (an integer or an enum) is stored as.
template <typename T>
using StoredAs = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::enable_if<true, T>>::type;

/// An entry header from its bytes (at least MinEntryHeaderSize of them).
inline EntryHeader decodeEntryHeader(const uint8_t *P) {
  EntryHeader H;
  forEachEntryHeaderField(H, [P](size_t At, auto &Field) {
    using T = std::remove_reference_t<decltype(Field)>;
    Field = static_cast<T>(llvm::support::endian::read<StoredAs<T>, llvm::endianness::little>(P + At));
  });
  return H;
}

/// Writes H's fields into the first MinEntryHeaderSize bytes at P.
inline void encodeEntryHeader(const EntryHeader &H, uint8_t *P) {
  forEachEntryHeaderField(H, [P](size_t At, const auto &Field) {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(Field)>>;
    llvm::support::endian::write<StoredAs<T>, llvm::endianness::little>(P + At, static_cast<StoredAs<T>>(Field));
  });
}

} // namespace ptxforge::fatbin::detail
