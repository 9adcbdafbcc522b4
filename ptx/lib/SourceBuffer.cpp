// Source text and its line table.
#include "ptxforge/ptx/SourceBuffer.h"

#include "ptxforge/support/InputFile.h"

#include <algorithm>

using namespace ptxforge;
using namespace ptxforge::ptx;

SourceBuffer::SourceBuffer(std::string Name, std::string Text) : Name(std::move(Name)), Text(std::move(Text)) {
  LineStarts.push_back(0);
  const char *D = this->Text.data();
  size_t N = this->Text.size();
  for (const char *P = D; (P = static_cast<const char *>(memchr(P, '\n', N - (P - D)))); ++P)
    LineStarts.push_back(static_cast<uint32_t>(P - D + 1));
}

llvm::Expected<std::unique_ptr<SourceBuffer>> SourceBuffer::fromFile(llvm::StringRef Path) {
  auto Text = support::readInputFile(Path, MaxBytes);
  if (!Text)
    return Text.takeError();
  return std::make_unique<SourceBuffer>(Path.str(), std::move(*Text));
}

LineColumn SourceBuffer::lineColumn(SourceLoc Loc) const {
  uint32_t Off = std::min<uint32_t>(Loc.Offset, static_cast<uint32_t>(Text.size()));
  auto It = std::upper_bound(LineStarts.begin(), LineStarts.end(), Off);
  unsigned Line = static_cast<unsigned>(It - LineStarts.begin());
  return {Line, Off - LineStarts[Line - 1] + 1};
}

llvm::StringRef SourceBuffer::lineText(SourceLoc Loc) const {
  LineColumn LC = lineColumn(Loc);
  size_t B = LineStarts[LC.Line - 1];
  size_t E = LC.Line < LineStarts.size() ? LineStarts[LC.Line] - 1 : Text.size();
  llvm::StringRef L = llvm::StringRef(Text).slice(B, E);
  return L.rtrim('\r');
}
