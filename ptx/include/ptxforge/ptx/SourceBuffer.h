// Stage 1 of the pipeline: PTX source text with a line table, so any byte offset maps to file:line:col.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge::ptx {

/// A byte offset into a SourceBuffer (32 bits: PTX inputs over 4 GiB are rejected when loaded).
struct SourceLoc {
  uint32_t Offset = UINT32_MAX;
  bool isValid() const { return Offset != UINT32_MAX; }
};

struct LineColumn {
  unsigned Line = 0;   ///< 1-based
  unsigned Column = 0; ///< 1-based, in bytes
};

class SourceBuffer {
public:
  SourceBuffer(std::string Name, std::string Text);

  /// The largest source read from a file: offsets are 32-bit (SourceLoc).
  static constexpr uint64_t MaxBytes = UINT32_MAX - 1;

  /// Reads a regular file of at most MaxBytes ("-" is standard input); anything else is refused at once.
  static llvm::Expected<std::unique_ptr<SourceBuffer>> fromFile(llvm::StringRef Path);

  llvm::StringRef name() const { return Name; }
  llvm::StringRef text() const { return Text; }
  LineColumn lineColumn(SourceLoc Loc) const;
  /// The whole line holding Loc, without its newline.
  llvm::StringRef lineText(SourceLoc Loc) const;

private:
  std::string Name;
  std::string Text;
  std::vector<uint32_t> LineStarts;
};

} // namespace ptxforge::ptx
