// `ptxforge objdump`: cuobjdump's listing, PTX dump and extraction for fatbinaries and ELF files with
// CUDA code (cuobjdump's -lptx/-lelf/-ptx/-xptx/-xelf/-all map to the long options here).
#include "Commands.h"

#include "ptxforge/codegen/CompiledObject.h"
#include "ptxforge/fatbin/Listing.h"
#include "ptxforge/fatbin/Reader.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

using namespace llvm;
using namespace ptxforge::fatbin;

namespace ptxforge::tools {
namespace {

struct ObjdumpOptions {
  std::vector<std::string> Inputs;
  bool ListPtx = false;
  bool ListElf = false;
  bool ListHost = false;
  bool All = false;
  bool DumpPtx = false;
  bool DumpElf = false;
  bool DumpHost = false;
  std::vector<std::string> ExtractPtx;
  std::vector<std::string> ExtractElf;
  std::vector<std::string> ExtractHost;
  std::string OutputDir = ".";

  bool anyExtraction() const { return !ExtractPtx.empty() || !ExtractElf.empty() || !ExtractHost.empty(); }
  bool anyAction() const { return ListPtx || ListElf || ListHost || DumpPtx || DumpElf || DumpHost || anyExtraction(); }
};

Error makeError(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

void reportError(const Twine &Msg) { WithColor::error(errs(), "ptxforge objdump") << Msg << "\n"; }

/// What the dumps share: every entry's header block, each entry Dumped selects followed by what Body prints of
/// its contents.
Error dumpEntries(raw_ostream &OS, const Fatbinary &F, HostNativeStyle Style, function_ref<bool(const Entry &)> Dumped,
                  function_ref<Error(const Entry &, StringRef)> Body) {
  for (const Entry *E : F.entries()) {
    printEntryHeader(OS, *E, Style);
    if (!Dumped(*E))
      continue;
    auto Bytes = E->contents();
    if (!Bytes)
      return Bytes.takeError();
    if (Error Err = Body(*E, toStringRef(*Bytes)))
      return Err;
  }
  return Error::success();
}

/// `cuobjdump -ptx`: every entry's header block, each PTX one followed by its text (cuobjdump 13.0 prints
/// the text right after the "ptxasOptions = " line).
Error dumpPtx(raw_ostream &OS, const Fatbinary &F) {
  return dumpEntries(
      OS, F, HostNativeStyle::AsCuobjdump, [](const Entry &E) { return E.isPtx(); },
      [&](const Entry &, StringRef Bytes) {
        OS << Bytes.take_until([](char C) { return C == 0; }); // NVIDIA's NUL terminator and padding
        return Error::success();
      });
}

/// `-elf`: every entry's header block, each ELF one followed by its section table. cuobjdump prints the
/// sections' contents as well; the table is what ptxforge can show without NVIDIA's ELF knowledge.
Error dumpElf(raw_ostream &OS, const Fatbinary &F) {
  return dumpEntries(
      OS, F, HostNativeStyle::AsCuobjdump, [](const Entry &E) { return E.isElf(); },
      [&](const Entry &E, StringRef Data) -> Error {
        auto Obj = object::ObjectFile::createELFObjectFile(MemoryBufferRef(Data, E.archName()));
        if (!Obj)
          return makeError("cubin for " + E.archName() + ": " + toString(Obj.takeError()));
        OS << "\nSections:\n";
        for (const object::SectionRef &Sec : (*Obj)->sections()) {
          Expected<StringRef> Name = Sec.getName();
          if (!Name)
            return Name.takeError();
          if (Name->empty())
            continue; // the null section
          OS << format("  %-40s size 0x%llx\n", Name->str().c_str(), (unsigned long long)Sec.getSize());
        }
        return Error::success();
      });
}

/// `--dump-host` (ptxforge's own): every entry's header, host-native ones as ptxforge's (the other dumps show
/// them as cuobjdump does, as a kind it does not know) and followed by what their compiled object holds, read
/// back as the loader reads it.
Error dumpHost(raw_ostream &OS, const Fatbinary &F) {
  return dumpEntries(
      OS, F, HostNativeStyle::AsPtxforge, [](const Entry &E) { return E.isHostNative(); },
      [&](const Entry &E, StringRef Bytes) -> Error {
        auto Obj = codegen::CompiledObject::deserialize(Bytes);
        if (!Obj)
          return makeError("host code for " + E.archName() + " (" + E.Options + "): " + toString(Obj.takeError()));
        std::vector<std::string> Kernels;
        for (const codegen::KernelInfo &K : Obj->Kernels)
          Kernels.push_back(K.Name);
        OS << "target = " << Obj->TargetTriple << " " << Obj->TargetCpu << "\n";
        OS << "optimization = -O" << Obj->OptLevel << "\n";
        OS << "ptx = " << ptx::smName(Obj->Facts.TargetSm, Obj->Facts.TargetSuffix) << ", ISA "
           << Obj->Facts.PtxVersion / 10 << "." << Obj->Facts.PtxVersion % 10 << "\n";
        OS << "kernels = " << join(Kernels, ", ") << "\n";
        OS << "object = " << Obj->ObjectCode.size() << " bytes\n";
        OS << "runs here = " << (errorToBool(Obj->checkRunsOnHost()) ? "no" : "yes") << "\n";
        return Error::success();
      });
}

/// What extracting an entry writes: PTX without NVIDIA's NUL terminator and padding; for a host-native entry the
/// ELF object it holds (so `nm`, `objdump -d` and a linker take the `.o` file); other entries as stored.
Expected<std::string> extractedBytes(const Entry &E) {
  auto Bytes = E.contents();
  if (!Bytes)
    return Bytes.takeError();
  StringRef Data = toStringRef(*Bytes);
  if (E.isPtx())
    return Data.take_until([](char C) { return C == 0; }).str();
  if (E.isHostNative()) {
    auto Obj = codegen::CompiledObject::deserialize(Data);
    if (!Obj)
      return makeError("host code for " + E.archName() + " (" + E.Options + "): " + toString(Obj.takeError()));
    return std::move(Obj->ObjectCode);
  }
  return Data.str();
}

Error writeEntry(const NamedEntry &N, StringRef OutputDir) {
  auto Bytes = extractedBytes(*N.E);
  if (!Bytes)
    return Bytes.takeError();
  SmallString<256> Path(OutputDir);
  sys::path::append(Path, N.FileName);
  std::error_code EC;
  raw_fd_ostream Out(Path, EC, sys::fs::OF_None);
  if (EC)
    return makeError(Path + ": " + EC.message());
  Out << *Bytes;
  Out.close();
  if (Out.has_error())
    return makeError(Path + ": " + Out.error().message());
  return Error::success();
}

/// The line cuobjdump prints for each extracted file.
void reportExtraction(raw_ostream &OS, const NamedEntry &N) {
  if (N.E->isPtx()) {
    OS << "Extracting PTX file and ptxas options " << format("%4u", N.Index) << ": " << N.FileName << " ";
    if (!N.E->Options.trim().empty())
      OS << N.E->Options.trim() << " ";
    OS << "-arch=" << N.E->archName() << " \n";
    return;
  }
  OS << (N.E->isElf() ? "Extracting ELF file " : "Extracting HOST file ") << format("%4u", N.Index) << ": "
     << N.FileName << "\n";
}

/// `-xptx NAME` / `-xelf NAME`: writes the entries whose listed names are requested ("all" for every one
/// of that kind). A name that matches nothing is an input error (cuobjdump 13.0 ignores it silently, which
/// hides typos).
Error extractEntries(const ObjdumpOptions &O, const Fatbinary &F, StringRef Input) {
  struct Request {
    const std::vector<std::string> &Names;
    bool (Entry::*Is)() const;
  };
  for (const Request &R : {Request{O.ExtractPtx, &Entry::isPtx}, Request{O.ExtractElf, &Entry::isElf},
                           Request{O.ExtractHost, &Entry::isHostNative}}) {
    if (R.Names.empty())
      continue;
    StringSet<> Wanted, Found;
    for (const std::string &Name : R.Names)
      Wanted.insert(Name);
    bool All = Wanted.contains("all");
    for (const NamedEntry &N : nameEntries(F, listingStem(Input))) {
      if (!(N.E->*R.Is)() || !(All || Wanted.contains(N.FileName)))
        continue;
      if (Error E = writeEntry(N, O.OutputDir))
        return E;
      reportExtraction(outs(), N);
      Found.insert(N.FileName);
    }
    for (const std::string &Name : R.Names)
      if (Name != "all" && !Found.contains(Name))
        return makeError("no entry named '" + Name + "'");
  }
  return Error::success();
}

int runObjdump(const ObjdumpOptions &O) {
  int Status = ExitOk;
  ReadOptions Read;
  Read.IncludeRelocatable = O.All;
  for (const std::string &Input : O.Inputs) {
    auto File = FatbinaryFile::open(Input, Read);
    if (!File) {
      reportError(toString(File.takeError()));
      Status = ExitInputError;
      continue;
    }
    const Fatbinary &F = File->fatbinary();
    if (!O.anyAction())
      printHeaders(outs(), F);
    if (O.ListPtx || O.ListElf || O.ListHost) {
      ListingKinds Kinds;
      Kinds.Ptx = O.ListPtx;
      Kinds.Elf = O.ListElf;
      Kinds.Host = O.ListHost;
      outs().flush();
      printListing(outs(), errs(), F, Input, Kinds);
    }
    Error Err = O.DumpPtx ? dumpPtx(outs(), F) : Error::success();
    if (!Err && O.DumpElf)
      Err = dumpElf(outs(), F);
    if (!Err && O.DumpHost)
      Err = dumpHost(outs(), F);
    if (!Err && O.anyExtraction())
      Err = extractEntries(O, F, Input);
    if (Err) {
      reportError(Input + ": " + toString(std::move(Err)));
      Status = ExitInputError;
    }
  }
  outs().flush();
  return Status;
}

} // namespace

void addObjdumpCommand(CLI::App &App, Runner &Run) {
  CLI::App *Cmd = App.add_subcommand(
      "objdump", "List, dump and extract the PTX, ELF and host-native entries of fatbinaries and of ELF files "
                 "with CUDA code (cuobjdump); with no action, print every entry's header");
  auto Opts = std::make_shared<ObjdumpOptions>();
  addInputs(*Cmd, Opts->Inputs, "fatbinary files, ELF executables, shared libraries or objects");
  Cmd->add_flag("--list-ptx", Opts->ListPtx, "list the PTX entries (cuobjdump -lptx)");
  Cmd->add_flag("--list-elf", Opts->ListElf, "list the ELF (SASS) entries (cuobjdump -lelf)");
  Cmd->add_flag("--list-host", Opts->ListHost, "list ptxforge's host-native entries (-lptx and -lelf leave them out)");
  Cmd->add_flag("--all", Opts->All, "also read relocatable fatbinaries (__nv_relfatbin) in ELF files (cuobjdump -all)");
  Cmd->add_flag("--dump-ptx", Opts->DumpPtx, "print every entry's header and the text of PTX entries (cuobjdump -ptx)");
  Cmd->add_flag("--dump-elf", Opts->DumpElf,
                "print every entry's header and the section table of ELF entries (cuobjdump -elf)");
  Cmd->add_flag("--dump-host", Opts->DumpHost,
                "print every entry's header and, for host-native entries, what their compiled code holds (target "
                "CPU, kernels, whether this CPU runs it)");
  addRepeatedOption(*Cmd, "--extract-ptx", Opts->ExtractPtx,
                    "write the PTX entry with this listed name, or 'all' (cuobjdump -xptx)");
  addRepeatedOption(*Cmd, "--extract-elf", Opts->ExtractElf,
                    "write the ELF entry with this listed name, or 'all' (cuobjdump -xelf)");
  addRepeatedOption(*Cmd, "--extract-host", Opts->ExtractHost,
                    "write the ELF object of the host-native entry with this listed name, or 'all'");
  Cmd->add_option("--output-dir", Opts->OutputDir, "where extracted files go (default: the current directory)");
  Cmd->callback([&Run, Opts] { Run = [Opts] { return runObjdump(*Opts); }; });
}

} // namespace ptxforge::tools
