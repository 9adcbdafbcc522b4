// libFuzzer entry for the fatbinary reader: arbitrary bytes as a raw fatbinary or ELF file, then
// everything a loader does with a successful read (decompress, select, list).
#include "ptxforge/fatbin/Listing.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Selection.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace ptxforge::fatbin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // Copy into an exactly sized buffer so any read past the end is caught by the sanitizers.
  auto Buffer =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(reinterpret_cast<const char *>(Data), Size), "fuzz-input");
  auto File = FatbinaryFile::fromBuffer(std::move(Buffer));
  if (!File) {
    llvm::consumeError(File.takeError());
    return 0;
  }
  for (const Entry *E : File->fatbinary().entries()) {
    auto Contents = E->contents();
    if (!Contents)
      llvm::consumeError(Contents.takeError());
  }
  SelectionRequest Request;
  Request.HostIsaLevels = {"x86-64-v3", "x86-64"};
  for (unsigned CC : {75u, 90u, 100u}) {
    Request.ComputeCapability = CC;
    for (const Container &C : File->fatbinary().Containers)
      (void)selectEntry(C.Entries, Request);
  }
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printHeaders(OS, File->fatbinary());
  printListing(OS, OS, File->fatbinary(), "fuzz-input", {true, true, true});
  return 0;
}
