// From what a program hands to cuModuleLoad* to PTX text: files and in-memory images are told apart by their
// first bytes (fatbinary container, nvcc's wrapper struct, ELF, or PTX text), fatbinaries go through the
// -gencode selection rules of fatbin/Selection.h, which may pick a host-native entry (compiled code) instead.
#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/codegen/FaultGuard.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Module.h"
#include "ptxforge/driver/Settings.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/fatbin/Fatbinary.h"
#include "ptxforge/fatbin/HostIsa.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/fatbin/Selection.h"
#include "ptxforge/support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <optional>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

/// PTX starts with directives (after comments and blank lines); anything else is not a module image.
bool looksLikePtx(llvm::StringRef Text) {
  for (;;) {
    Text = Text.ltrim();
    if (Text.consume_front("//")) {
      Text = Text.drop_until([](char C) { return C == '\n'; });
      continue;
    }
    if (Text.consume_front("/*")) {
      size_t End = Text.find("*/");
      if (End == llvm::StringRef::npos)
        return false;
      Text = Text.drop_front(End + 2);
      continue;
    }
    return Text.starts_with(".");
  }
}

/// True when every NVIDIA cubin that would serve this device holds no code (nvcc emits such "dummy" modules
/// for translation units without kernels; the real driver loads them and finds no functions).
bool onlyEmptyCubins(llvm::ArrayRef<const fatbin::Entry *> Entries, unsigned CC) {
  bool Any = false;
  for (const fatbin::Entry *E : Entries) {
    if (!E->isElf() || E->arch() / 10 != CC / 10 || E->arch() > CC)
      continue;
    auto Bytes = E->contents();
    if (!Bytes) {
      llvm::consumeError(Bytes.takeError());
      return false;
    }
    llvm::StringRef Data(reinterpret_cast<const char *>(Bytes->data()), Bytes->size());
    auto Obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(Data, "cubin"));
    if (!Obj) {
      llvm::consumeError(Obj.takeError());
      return false;
    }
    for (const llvm::object::SymbolRef &S : (*Obj)->symbols()) {
      auto Type = S.getType();
      if (!Type) {
        llvm::consumeError(Type.takeError());
        return false;
      }
      if (*Type == llvm::object::SymbolRef::ST_Function)
        return false;
    }
    Any = true;
  }
  return Any;
}

/// The ISA levels this CPU runs, asked once (CPUID does not change while the process runs).
const std::vector<std::string> &hostIsaLevels() {
  static const std::vector<std::string> Levels = fatbin::hostIsaLevels();
  return Levels;
}

llvm::Expected<SelectedPtx> selectFromEntries(llvm::ArrayRef<const fatbin::Entry *> Entries, unsigned CC,
                                              std::string Name, JitLogs &Logs) {
  fatbin::SelectionRequest Request;
  Request.ComputeCapability = CC;
  Request.Jit = jitPolicyFromEnvironment();
  Request.HostIsaLevels = hostIsaLevels();
  fatbin::Selection S = fatbin::selectEntry(Entries, Request);
  switch (S.Status) {
  case fatbin::SelectionStatus::Selected: {
    if (S.Chosen->isHostNative()) {
      auto Bytes = S.Chosen->contents();
      if (!Bytes) {
        Logs.Error = "ptxforge: " + llvm::toString(Bytes.takeError());
        return makeError(Status::InvalidImage, Logs.Error);
      }
      // Host code another ptxforge version made calls this runtime with other arguments: like a cubin the
      // device cannot run, it gives way to the PTX beside it, when there is any.
      llvm::StringRef ObjectBytes(reinterpret_cast<const char *>(Bytes->data()), Bytes->size());
      if (codegen::CompiledObject::isOtherVersion(ObjectBytes)) {
        std::vector<const fatbin::Entry *> PtxOnly;
        for (const fatbin::Entry *E : Entries)
          if (!E->isHostNative())
            PtxOnly.push_back(E);
        if (!PtxOnly.empty() && fatbin::selectEntry(PtxOnly, Request).Status == fatbin::SelectionStatus::Selected) {
          Logs.Info += "ptxforge: host-native entry " + S.Chosen->archName() + "." + S.Chosen->Options.str() +
                       " was made by another ptxforge version; compiling the PTX instead\n";
          return selectFromEntries(PtxOnly, CC, std::move(Name), Logs);
        }
      }
      SelectedPtx Out;
      Out.Name = Name + ":" + S.Chosen->archName() + "." + S.Chosen->Options.str() + ".o";
      Out.Object.assign(Bytes->begin(), Bytes->end());
      return Out;
    }
    auto Text = S.Chosen->ptxText();
    if (!Text) {
      Logs.Error = "ptxforge: " + llvm::toString(Text.takeError());
      return makeError(Status::InvalidImage, Logs.Error);
    }
    return SelectedPtx{std::move(*Text), Name + ":" + S.Chosen->archName() + ".ptx", false, {}};
  }
  case fatbin::SelectionStatus::PtxMissing:
    if (onlyEmptyCubins(Entries, CC))
      return SelectedPtx{"", Name, true, {}};
    Logs.Error = "ptxforge: " + S.Message + " (ptxforge runs PTX; NVIDIA SASS cannot run on it)";
    return makeError(Status::NoBinaryForGpu, Logs.Error);
  case fatbin::SelectionStatus::NoBinaryForGpu:
    Logs.Error = "ptxforge: " + S.Message;
    return makeError(Status::NoBinaryForGpu, Logs.Error);
  case fatbin::SelectionStatus::JitDisabled:
    Logs.Error = "ptxforge: " + S.Message;
    return makeError(Status::JitCompilationDisabled, Logs.Error);
  }
  return makeError(Status::Unknown, "unexpected fatbinary selection result");
}

/// A fatbinary file, or an ELF file/image with a `.nv_fatbin` section; a plain cubin has no PTX to run.
llvm::Expected<SelectedPtx> selectFromFatbinaryBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer, unsigned CC,
                                                      JitLogs &Logs) {
  std::string Name = Buffer->getBufferIdentifier().str();
  bool IsElf = fatbin::identifyImage(llvm::arrayRefFromStringRef(Buffer->getBuffer())) == fatbin::ImageFormat::Elf;
  auto File = fatbin::FatbinaryFile::fromBuffer(std::move(Buffer));
  if (!File) {
    std::string Why = llvm::toString(File.takeError());
    if (IsElf) {
      Logs.Error = "ptxforge: " + Name + " is an ELF file without PTX (an NVIDIA cubin?): " + Why;
      return makeError(Status::NoBinaryForGpu, Logs.Error);
    }
    Logs.Error = "ptxforge: " + Name + ": " + Why;
    return makeError(Status::InvalidImage, Logs.Error);
  }
  return selectFromEntries(File->fatbinary().entries(), CC, Name, Logs);
}

llvm::Expected<SelectedPtx> selectFromImage(const uint8_t *P, unsigned CC, JitLogs &Logs, bool PtxText);

/// The extent of an in-memory ELF image, from its headers (the loader is given no size).
uint64_t elfImageSize(const uint8_t *P) {
  if (P[4] != 2 /*ELFCLASS64*/ || P[5] != 1 /*little endian*/)
    return 0;
  uint64_t ShOff, PhOff;
  uint16_t ShEntSize, ShNum, PhEntSize, PhNum;
  std::memcpy(&PhOff, P + 0x20, 8);
  std::memcpy(&ShOff, P + 0x28, 8);
  std::memcpy(&PhEntSize, P + 0x36, 2);
  std::memcpy(&PhNum, P + 0x38, 2);
  std::memcpy(&ShEntSize, P + 0x3a, 2);
  std::memcpy(&ShNum, P + 0x3c, 2);
  return std::max<uint64_t>({64, ShOff + uint64_t(ShEntSize) * ShNum, PhOff + uint64_t(PhEntSize) * PhNum});
}

/// The bytes of a module file. As NVIDIA's driver: a missing file is FileNotFound, anything that is not a
/// regular file (/dev/zero, a FIFO, a directory) an invalid image at once, never read.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readModuleFile(const std::string &Path, JitLogs &Logs) {
  auto Buffer = support::readInputFileBuffer(Path);
  if (Buffer)
    return Buffer;
  Status S = Status::FileNotFound;
  llvm::handleAllErrors(Buffer.takeError(), [&](const support::InputFileError &E) {
    Logs.Error = "ptxforge: " + E.message();
    if (E.kind() == support::ReadFailure::NotRegular || E.kind() == support::ReadFailure::TooLarge)
      S = Status::InvalidImage;
  });
  return makeError(S, Logs.Error);
}

} // namespace

llvm::Expected<SelectedPtx> ptxforge::driver::selectPtx(const ModuleSource &Source, unsigned CC, JitLogs &Logs,
                                                        bool PtxText) {
  if (Source.K == ModuleSource::Kind::File) {
    auto Buffer = readModuleFile(Source.Path, Logs);
    if (!Buffer)
      return Buffer.takeError();
    llvm::StringRef Bytes = (*Buffer)->getBuffer();
    switch (fatbin::identifyImage(llvm::arrayRefFromStringRef(Bytes))) {
    case fatbin::ImageFormat::Container:
    case fatbin::ImageFormat::Elf:
      return selectFromFatbinaryBuffer(std::move(*Buffer), CC, Logs);
    case fatbin::ImageFormat::Wrapper:
      Logs.Error = "ptxforge: " + Source.Path + " holds a __fatBinC_Wrapper_t, not a fatbinary";
      return makeError(Status::InvalidImage, Logs.Error);
    case fatbin::ImageFormat::Unknown:
      break;
    }
    llvm::StringRef Text = Bytes.take_until([](char C) { return C == 0; });
    if (!PtxText || !looksLikePtx(Text)) {
      Logs.Error = "ptxforge: " + Source.Path + (PtxText ? " is neither PTX nor a fatbinary" : " is not a fatbinary");
      return makeError(Status::InvalidImage, Logs.Error);
    }
    return SelectedPtx{Text.str(), Source.Path, false, {}};
  }

  // The loader gets no size for an in-memory image: a corrupt header could send the reader past its end, so
  // reading it is a guarded call (a fault there is an invalid image, not a crash).
  std::optional<llvm::Expected<SelectedPtx>> Result;
  std::optional<ptxforge::codegen::Fault> F = ptxforge::codegen::runWithFaultGuard(
      [&] { Result.emplace(selectFromImage(static_cast<const uint8_t *>(Source.Image), CC, Logs, PtxText)); });
  if (F || !Result) {
    Logs.Error = "ptxforge: reading the image faulted at address 0x" + llvm::utohexstr(F ? F->Address : 0);
    return makeError(Status::InvalidImage, Logs.Error);
  }
  return std::move(*Result);
}

namespace {
llvm::Expected<SelectedPtx> selectFromImage(const uint8_t *P, unsigned CC, JitLogs &Logs, bool PtxText) {
  // Read no further than a NUL among the first bytes: a short PTX string may end there. Every binary magic
  // (container, wrapper, ELF) has four non-zero bytes.
  size_t Head = 0;
  while (Head < 4 && P[Head])
    ++Head;
  fatbin::ImageFormat Format = Head == 4 ? fatbin::identifyImage(llvm::ArrayRef(P, 4)) : fatbin::ImageFormat::Unknown;
  switch (Format) {
  case fatbin::ImageFormat::Container: {
    // One container, its size from its header (a container cut out of a multi-container section loads too).
    auto Header = fatbin::decodeContainerHeader(llvm::ArrayRef(P, fatbin::ContainerHeaderSize));
    if (!Header) {
      Logs.Error = "ptxforge: " + llvm::toString(Header.takeError());
      return makeError(Status::InvalidImage, Logs.Error);
    }
    uint64_t Size = uint64_t(Header->HeaderSize) + Header->PayloadSize;
    auto C = fatbin::parseContainer(llvm::ArrayRef(P, Size));
    if (!C) {
      Logs.Error = "ptxforge: " + llvm::toString(C.takeError());
      return makeError(Status::InvalidImage, Logs.Error);
    }
    std::vector<const fatbin::Entry *> Entries;
    for (const fatbin::Entry &E : C->Entries)
      Entries.push_back(&E);
    return selectFromEntries(Entries, CC, "fatbinary", Logs);
  }
  case fatbin::ImageFormat::Wrapper:
    // NVIDIA's driver refuses nvcc's host-side wrapper struct too; cudart unwraps it before loading.
    Logs.Error = "ptxforge: the image is a __fatBinC_Wrapper_t; pass the fatbinary it points to";
    return makeError(Status::InvalidImage, Logs.Error);
  case fatbin::ImageFormat::Elf: {
    uint64_t Size = elfImageSize(P);
    if (!Size) {
      Logs.Error = "ptxforge: unsupported ELF image (not 64-bit little-endian)";
      return makeError(Status::InvalidImage, Logs.Error);
    }
    auto Buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(reinterpret_cast<const char *>(P), Size),
                                                   "ELF image", /*RequiresNullTerminator=*/false);
    return selectFromFatbinaryBuffer(std::move(Buffer), CC, Logs);
  }
  case fatbin::ImageFormat::Unknown:
    break;
  }
  if (!PtxText) {
    Logs.Error = "ptxforge: the image is not a fatbinary";
    return makeError(Status::InvalidImage, Logs.Error);
  }
  llvm::StringRef Text(reinterpret_cast<const char *>(P));
  if (!looksLikePtx(Text)) {
    Logs.Error = "ptxforge: the image is neither PTX text nor a fatbinary";
    return makeError(Status::InvalidImage, Logs.Error);
  }
  return SelectedPtx{Text.str(), "<ptx image>", false, {}};
}
} // namespace
