// Payload compression of fatbinary entries, through libzstd (flag 0x8000) and liblz4 (flag 0x2000) only.
#pragma once

#include "ptxforge/fatbin/Format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ptxforge::fatbin {

/// Decompresses Data, which the entry header says expands to DeclaredSize bytes.
/// Fails when DeclaredSize exceeds Limit, when the data is corrupt, or when it expands to a size other than
/// DeclaredSize. Memory grows with the output actually produced, never with the declared size alone, so a
/// small input that lies about its size cannot make the reader allocate a gigabyte.
[[nodiscard]] llvm::Expected<std::vector<uint8_t>>
decompress(Compression Kind, llvm::ArrayRef<uint8_t> Data, uint64_t DeclaredSize, uint64_t Limit = MaxUncompressedSize);

/// Compresses Data (Kind must not be None). Level 0 picks each library's default.
[[nodiscard]] llvm::Expected<std::vector<uint8_t>> compress(Compression Kind, llvm::ArrayRef<uint8_t> Data,
                                                            int Level = 0);

} // namespace ptxforge::fatbin
