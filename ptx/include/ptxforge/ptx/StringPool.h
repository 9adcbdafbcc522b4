// Interning of names into an arena owned by a Function or Module. Inline on purpose: llvm::StringSaver::save
// lives in libLLVM, which is not built with ASan, and mixing its allocations with the instrumented inline
// BumpPtrAllocator code makes ASan report false use-after-poison errors in the fuzz build.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"

#include <cstring>

namespace ptxforge::ptx {

class StringPool {
public:
  explicit StringPool(llvm::BumpPtrAllocator &Arena) : Arena(&Arena) {}
  llvm::StringRef save(llvm::StringRef S) {
    char *P = static_cast<char *>(Arena->Allocate(S.size() + 1, llvm::Align(1)));
    if (!S.empty())
      std::memcpy(P, S.data(), S.size());
    P[S.size()] = 0;
    return llvm::StringRef(P, S.size());
  }

private:
  llvm::BumpPtrAllocator *Arena;
};

} // namespace ptxforge::ptx
