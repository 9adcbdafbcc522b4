// ORC JIT: link a CompiledObject into this process with the runtime helpers, look up kernels and globals.
#include "ptxforge/codegen/CompiledModule.h"
#include "ptxforge/codegen/CompiledObject.h"

#include "../exec/MatrixCompute.h"
#include "../exec/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <unistd.h>

using namespace ptxforge;
using namespace ptxforge::codegen;

namespace {

/// Resolves the symbols an object declares from another module's JIT (where the shared part of a split
/// module was loaded); what that JIT does not define is left to the generators after this one.
class ImportGenerator : public llvm::orc::DefinitionGenerator {
public:
  explicit ImportGenerator(llvm::orc::LLJIT &From) : From(From) {}

  llvm::Error tryToGenerate(llvm::orc::LookupState &, llvm::orc::LookupKind, llvm::orc::JITDylib &JD,
                            llvm::orc::JITDylibLookupFlags, const llvm::orc::SymbolLookupSet &Symbols) override {
    llvm::orc::SymbolMap Found;
    for (const auto &[Name, Flags] : Symbols) {
      auto Addr = From.lookupLinkerMangled(*Name);
      if (!Addr) {
        llvm::consumeError(Addr.takeError());
        continue;
      }
      Found[Name] = llvm::orc::ExecutorSymbolDef(*Addr, llvm::JITSymbolFlags::Exported);
    }
    if (Found.empty())
      return llvm::Error::success();
    return JD.define(llvm::orc::absoluteSymbols(std::move(Found)));
  }

private:
  llvm::orc::LLJIT &From;
};

/// A function symbol of an object, with what placing it needs.
struct FunctionSymbol {
  llvm::StringRef Name;
  uint64_t Offset, Size, Section; ///< offset and size in its section, the section's index
  bool Global;
};

/// Sym as a function symbol of Obj; none for any other symbol (or one LLVM cannot read).
std::optional<FunctionSymbol> functionSymbol(const llvm::object::ObjectFile &Obj, const llvm::object::SymbolRef &Sym) {
  auto Type = Sym.getType();
  auto Flags = Sym.getFlags();
  auto Name = Sym.getName();
  auto Sec = Sym.getSection();
  auto Value = Sym.getValue();
  if (!Type || !Flags || !Name || !Sec || !Value || *Type != llvm::object::SymbolRef::ST_Function || Name->empty() ||
      *Sec == Obj.section_end()) {
    llvm::consumeError(Type.takeError());
    llvm::consumeError(Flags.takeError());
    llvm::consumeError(Name.takeError());
    llvm::consumeError(Sec.takeError());
    llvm::consumeError(Value.takeError());
    return std::nullopt;
  }
  return FunctionSymbol{*Name, *Value, llvm::object::ELFSymbolRef(Sym).getSize(), (*Sec)->getIndex(),
                        (*Flags & llvm::object::SymbolRef::SF_Global) != 0};
}

/// Where the JIT linked each of Obj's sections that holds an exported function, by section index. The linker
/// keeps each section whole, so a section's address is any exported function's address less its offset in the
/// section; a section whose functions disagree on that (a layout this does not know) is left out.
std::map<uint64_t, uint64_t> sectionBases(const llvm::object::ObjectFile &Obj, llvm::orc::LLJIT &JIT) {
  std::map<uint64_t, uint64_t> Bases;
  std::set<uint64_t> Disagree;
  for (const llvm::object::SymbolRef &Sym : Obj.symbols()) {
    std::optional<FunctionSymbol> F = functionSymbol(Obj, Sym);
    if (!F || !F->Global)
      continue;
    auto Addr = JIT.lookup(F->Name);
    if (!Addr) {
      llvm::consumeError(Addr.takeError());
      continue;
    }
    uint64_t Base = Addr->getValue() - F->Offset;
    if (auto [It, New] = Bases.try_emplace(F->Section, Base); !New && It->second != Base)
      Disagree.insert(F->Section);
  }
  for (uint64_t Index : Disagree)
    Bases.erase(Index);
  return Bases;
}

/// A function of the object, named for perf: its JIT address, size and name.
struct PerfSymbol {
  uint64_t Address, Size;
  std::string Name;
};

/// Obj's functions placed by their sections' bases (sectionBases): the exported ones and the module-local ones
/// (the block functions and region pieces, where a region-split kernel spends its time), which a JIT lookup does
/// not find.
std::vector<PerfSymbol> perfSymbols(llvm::orc::LLJIT &JIT, const llvm::object::ObjectFile &Obj) {
  std::map<uint64_t, uint64_t> Bases = sectionBases(Obj, JIT);
  std::vector<PerfSymbol> Syms;
  for (const llvm::object::SymbolRef &Sym : Obj.symbols())
    if (std::optional<FunctionSymbol> F = functionSymbol(Obj, Sym))
      if (auto Base = Bases.find(F->Section); Base != Bases.end())
        Syms.push_back({Base->second + F->Offset, F->Size, F->Name.str()});
  return Syms;
}

/// Names Object's functions for perf as Mode says (PerfMap).
void writePerfMap(llvm::orc::LLJIT &JIT, llvm::StringRef ObjectCode, PerfMap Mode) {
  if (Mode == PerfMap::Off)
    return;
  auto Obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(ObjectCode, "ptxforge-object"));
  if (!Obj) {
    llvm::consumeError(Obj.takeError());
    return;
  }
  std::vector<PerfSymbol> Syms = perfSymbols(JIT, **Obj);
  static std::mutex Lock;
  std::scoped_lock L(Lock);
  std::string Path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::FILE *F = std::fopen(Path.c_str(), "a");
  if (!F)
    return;
  uint64_t First = 0;
  for (const PerfSymbol &Sym : Syms) {
    if (!Sym.Address)
      continue;
    std::fprintf(F, "%llx %llx %s\n", static_cast<unsigned long long>(Sym.Address),
                 static_cast<unsigned long long>(Sym.Size), Sym.Name.c_str());
    if (!First)
      First = Sym.Address;
  }
  std::fclose(F);
  if (Mode == PerfMap::Objects && First) {
    std::string ObjPath = "/tmp/perf-" + std::to_string(getpid()) + "-" + llvm::utohexstr(First) + ".o";
    if (std::FILE *O = std::fopen(ObjPath.c_str(), "wb")) {
      std::fwrite(ObjectCode.data(), 1, ObjectCode.size(), O);
      std::fclose(O);
    }
  }
}

} // namespace

// Before the JIT (a member) frees the code: what the runtime keeps by the code's addresses is checked again.
CompiledModule::~CompiledModule() { exec::noteCodeUnloaded(); }

llvm::Expected<std::unique_ptr<CompiledModule>> CompiledModule::compile(LoweredModule LM,
                                                                        const CompileOptions &Options) {
  auto Obj = compileObject(std::move(LM), Options);
  if (!Obj)
    return Obj.takeError();
  return load(*Obj, nullptr, Options.Perf);
}

llvm::Expected<std::unique_ptr<CompiledModule>> CompiledModule::load(const CompiledObject &Object,
                                                                     const CompiledModule *Imports, PerfMap Perf) {
  if (auto E = Object.checkRunsOnHost())
    return E;
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto JIT = llvm::orc::LLJITBuilder().create();
  if (!JIT)
    return JIT.takeError();
  llvm::orc::JITDylib &JD = (*JIT)->getMainJITDylib();
  llvm::orc::SymbolMap Symbols;
  for (const auto &[Name, Addr] : exec::runtimeHelpers())
    Symbols[(*JIT)->mangleAndIntern(Name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(Addr), llvm::JITSymbolFlags::Exported);
  if (auto E = JD.define(llvm::orc::absoluteSymbols(std::move(Symbols))))
    return E;
  if (Imports)
    JD.addGenerator(std::make_unique<ImportGenerator>(*Imports->JIT));
  // libm (exp2f, sinf, ...) for what LLVM lowers to library calls.
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*JIT)->getDataLayout().getGlobalPrefix());
  if (!Gen)
    return Gen.takeError();
  JD.addGenerator(std::move(*Gen));
  if (auto E = (*JIT)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(Object.ObjectCode, "ptxforge-object")))
    return E;

  std::unique_ptr<CompiledModule> CM(new CompiledModule());
  for (const KernelInfo &K : Object.Kernels) {
    auto Sym = (*JIT)->lookup(K.Symbol);
    if (!Sym)
      return Sym.takeError();
    CM->Kernels.push_back(K);
    CM->Entries.push_back(Sym->toPtr<ThreadFunction>());
    BlockRangeFunction Block = nullptr;
    if (!K.BlockSymbol.empty()) {
      auto BSym = (*JIT)->lookup(K.BlockSymbol);
      if (!BSym)
        return BSym.takeError();
      Block = BSym->toPtr<BlockRangeFunction>();
    }
    CM->BlockEntries.push_back(Block);
  }
  for (const GlobalInfo &G : Object.Globals) {
    auto Sym = (*JIT)->lookup(G.Symbol);
    if (!Sym)
      return Sym.takeError();
    CM->Globals.push_back(G);
    CM->GlobalAddrs.push_back(Sym->toPtr<void *>());
  }
  writePerfMap(**JIT, Object.ObjectCode, Perf);
  CM->JIT = std::move(*JIT);
  CM->Imports = Imports;
  CM->ObjectCode = Object.ObjectCode;
  return CM;
}

const KernelInfo *CompiledModule::kernel(llvm::StringRef Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

ThreadFunction CompiledModule::entry(const KernelInfo &K) const { return Entries[&K - Kernels.data()]; }

BlockRangeFunction CompiledModule::blockEntry(const KernelInfo &K) const { return BlockEntries[&K - Kernels.data()]; }

void *CompiledModule::globalAddress(llvm::StringRef Name, uint64_t *Size) const {
  for (size_t I = 0; I < Globals.size(); ++I)
    if (Globals[I].Name == Name) {
      if (Size)
        *Size = Globals[I].Size;
      return GlobalAddrs[I];
    }
  return nullptr;
}

std::string CompiledModule::sourceLocation(uint64_t Pc) const {
  std::string Where = ownSourceLocation(Pc);
  if (Where.empty() && Imports)
    return Imports->sourceLocation(Pc);
  return Where;
}

namespace {
/// Where Pc lies in Obj's code as JIT linked it: its section and offset there (sectionBases).
std::optional<llvm::object::SectionedAddress> objectAddress(const llvm::object::ObjectFile &Obj, llvm::orc::LLJIT &JIT,
                                                            uint64_t Pc) {
  std::map<uint64_t, uint64_t> Bases = sectionBases(Obj, JIT);
  for (const llvm::object::SectionRef &Sec : Obj.sections())
    if (auto Base = Bases.find(Sec.getIndex());
        Base != Bases.end() && Pc >= Base->second && Pc - Base->second < Sec.getSize())
      return llvm::object::SectionedAddress{Pc - Base->second, Sec.getIndex()};
  return std::nullopt;
}
} // namespace

std::string CompiledModule::ownSourceLocation(uint64_t Pc) const {
  auto Obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(ObjectCode, "ptxforge-object"));
  if (!Obj) {
    llvm::consumeError(Obj.takeError());
    return {};
  }
  std::optional<llvm::object::SectionedAddress> At = objectAddress(**Obj, *JIT, Pc);
  if (!At)
    return {};
  auto Ignore = [](llvm::Error E) { llvm::consumeError(std::move(E)); }; // a library prints nothing
  std::unique_ptr<llvm::DWARFContext> Dwarf = llvm::DWARFContext::create(
      **Obj, llvm::DWARFContext::ProcessDebugRelocations::Process, nullptr, "", Ignore, Ignore);
  std::optional<llvm::DILineInfo> Line =
      Dwarf->getLineInfoForAddress(*At, llvm::DILineInfoSpecifier(llvm::DILineInfoSpecifier::FileLineInfoKind::RawValue,
                                                                  llvm::DILineInfoSpecifier::FunctionNameKind::None));
  if (!Line || !Line->Line || Line->FileName == llvm::DILineInfo::BadString)
    return {};
  return Line->FileName + ":" + std::to_string(Line->Line) + ":" + std::to_string(Line->Column);
}

llvm::Expected<std::unique_ptr<CompiledModule>> ptxforge::codegen::compilePTX(const ptx::VerifiedModule &M,
                                                                              const ptx::SourceBuffer *Source,
                                                                              const CompileOptions &Options) {
  auto Obj = compilePTXObject(M, Source, Options);
  if (!Obj)
    return Obj.takeError();
  return CompiledModule::load(*Obj, nullptr, Options.Perf);
}
