// cuLink*: inputs are verified as they come; complete() merges them into one ptx::Module and prints it.
//
// The merged module is laid out so that every name is declared before it is used whatever the inputs' order:
// prototypes of all device functions first, then every module-scope variable (an initializer's symbols
// before the variable), then the function bodies in input order. `.file`/`.loc`/debug sections are dropped:
// file indices are per input and the printed text has its own lines anyway.
#include "ptxforge/driver/Link.h"
#include "ptxforge/codegen/DeviceRuntime.h"
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/ptx/Printer.h"
#include "ptxforge/ptx/Requirements.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <optional>

using namespace ptxforge;
using namespace ptxforge::driver;

namespace {

/// `.extern .func`s the runtime provides (codegen forwards them to its device library).
bool isDeviceLibraryFunction(const ptx::Function &F) { return codegen::deviceLibraryHelper(F) != nullptr; }

/// The device runtime's functions (dynamic parallelism) are ptxforge's own: libcudadevrt's PTX (which nvcc links
/// into every -rdc=true program, with PTX for sm_121) defines them over system calls of NVIDIA's driver, so its
/// definitions give way to the runtime's.
bool isRuntimeProvided(const ptx::Function &F) { return !F.IsEntry && codegen::isDeviceRuntimeFunction(F); }

bool isExternalDefinition(ptx::Linkage L) {
  return L == ptx::Linkage::Visible || L == ptx::Linkage::Weak || L == ptx::Linkage::Common;
}

using SymbolVisitor = std::function<void(llvm::StringRef &)>;

/// Calls Visit on every name F's body refers to that is a module-scope symbol (operands resolved by the
/// verifier to a variable or function, `.calltargets`), by reference so that it may rename.
void forEachFunctionSymbolUse(ptx::Function &F, const SymbolVisitor &Visit) {
  std::function<void(ptx::Operand &)> operand = [&](ptx::Operand &Op) {
    if ((Op.Kind == ptx::OperandKind::Symbol || Op.Kind == ptx::OperandKind::Address) &&
        (Op.Target.Kind == ptx::SymbolKind::Variable || Op.Target.Kind == ptx::SymbolKind::Function))
      Visit(Op.Name);
    // Operand lists live in the function's arena; the verifier only reads them, the link renames in place.
    for (const ptx::Operand &E : Op.Elements)
      operand(const_cast<ptx::Operand &>(E));
  };
  for (ptx::Instruction &I : F.Instructions)
    for (ptx::Operand &Op : I.Operands)
      operand(Op);
  for (ptx::TargetList &T : F.TargetLists)
    if (T.K == ptx::TargetList::Kind::CallTargets)
      for (llvm::StringRef &N : T.Names)
        Visit(N);
}

/// The names M's variable initializers and `.alias` directives refer to: whatever the kernels reach, these
/// stay (every variable is kept, for cuModuleGetGlobal).
void forEachModuleLevelSymbolUse(ptx::Module &M, const SymbolVisitor &Visit) {
  std::function<void(ptx::Initializer &)> initializer = [&](ptx::Initializer &In) {
    if (In.K == ptx::Initializer::Kind::Symbol)
      Visit(In.Name);
    for (ptx::Initializer &E : In.Elements)
      initializer(E);
  };
  for (ptx::VariableDecl &V : M.Globals)
    if (V.HasInit)
      initializer(V.Init);
  for (ptx::AliasDirective &A : M.Aliases) {
    Visit(A.Alias);
    Visit(A.Aliasee);
  }
}

/// Calls Visit on every name in M that refers to a module-scope symbol.
void forEachModuleSymbolUse(ptx::Module &M, const SymbolVisitor &Visit) {
  forEachModuleLevelSymbolUse(M, Visit);
  for (auto &F : M.Functions)
    if (F)
      forEachFunctionSymbolUse(*F, Visit);
}

/// Whether M defines a function called Name itself (a prototype resolving in its own module).
bool definesFunction(const ptx::Module &M, llvm::StringRef Name) {
  for (const auto &F : M.Functions)
    if (F->HasBody && F->Name == Name)
      return true;
  return false;
}

/// The `.extern .func`s in Used that nothing in M defines and that the runtime does not provide.
std::vector<llvm::StringRef> unresolvedFunctions(const ptx::Module &M, const llvm::StringSet<> &Used) {
  std::vector<llvm::StringRef> Out;
  for (const auto &F : M.Functions)
    if (!F->HasBody && Used.contains(F->Name) && !isDeviceLibraryFunction(*F) && !definesFunction(M, F->Name))
      Out.push_back(F->Name);
  return Out;
}

/// The names M uses anywhere (the visitor only reads: M is not changed).
llvm::StringSet<> usedNames(const ptx::Module &M) {
  llvm::StringSet<> Used;
  forEachModuleSymbolUse(const_cast<ptx::Module &>(M), [&](llvm::StringRef &N) { Used.insert(N); });
  return Used;
}

/// Links the inputs as a whole program, as nvlink does: the kernels, and the functions variable initializers
/// name, are what the result keeps, with every function they reach; a function nothing reaches is left out,
/// and what it refers to need not be defined anywhere (nvcc -rdc=true keeps every `.weak` template
/// instance, e.g. Thrust's device-side allocators calling `malloc`, whether used or not).
class ModuleLinker {
public:
  ModuleLinker(std::vector<LinkInput> &Inputs, std::string &Log) : Inputs(Inputs), Log(Log) {}

  llvm::Expected<std::string> link() {
    size_t Before = Log.size(); // the log may already hold what adding the inputs said
    collectDefinitions();
    markReachable();
    checkReferences();
    if (Log.size() != Before)
      return makeError(Status::Unknown, "the link has unresolved or multiply defined symbols");
    // One input that needs nothing from others and loses no function keeps its text (and its line numbers).
    if (Inputs.size() == 1 && keepsEveryFunction(0))
      return Inputs[0].Front->Source->text().str();
    renameCollidingInternals();
    buildMergedModule();
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    ptx::printModule(Out, OS);
    return Text;
  }

private:
  struct Definition {
    unsigned Input;
    bool IsFunction;
    uint32_t Index;
  };

  ptx::Module &module(unsigned I) { return Inputs[I].Front->Verified->module(); }

  static bool isStrong(ptx::Linkage L) { return L != ptx::Linkage::Weak && L != ptx::Linkage::Common; }

  ptx::Linkage linkageOf(const Definition &D) {
    return D.IsFunction ? module(D.Input).Functions[D.Index]->Link : module(D.Input).Globals[D.Index].Link;
  }

  void define(llvm::StringRef Name, Definition D) {
    auto [It, New] = External.try_emplace(Name, D);
    if (New)
      return;
    Definition &Old = It->second;
    bool OldStrong = isStrong(linkageOf(Old)), NewStrong = isStrong(linkageOf(D));
    if (OldStrong && NewStrong) {
      Log += "error   : Multiple definition of '" + Name.str() + "' in '" + Inputs[D.Input].Name +
             "', first defined in '" + Inputs[Old.Input].Name + "'\n";
    } else if (NewStrong) {
      Old = D; // a strong definition overrides weak ones
    }
  }

  /// Every externally visible definition: kernels, `.visible`/`.weak` functions, `.visible`/`.weak`/`.common`
  /// variables; and each input's own functions without linkage.
  void collectDefinitions() {
    Internal.resize(Inputs.size());
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      ptx::Module &M = module(I);
      for (uint32_t G = 0; G < M.Globals.size(); ++G)
        if (isExternalDefinition(M.Globals[G].Link))
          define(M.Globals[G].Name, {I, false, G});
      for (uint32_t F = 0; F < M.Functions.size(); ++F) {
        const ptx::Function &Fn = *M.Functions[F];
        if (Fn.HasBody && isRuntimeProvided(Fn))
          continue;
        if (Fn.HasBody && (Fn.IsEntry || isExternalDefinition(Fn.Link)))
          define(Fn.Name, {I, true, F});
        else if (Fn.HasBody)
          Internal[I].try_emplace(Fn.Name, F);
      }
    }
  }

  /// The function a use of Name in input I calls or takes: I's own function without linkage, else the
  /// link's definition of that name.
  std::optional<std::pair<unsigned, uint32_t>> resolveFunction(unsigned I, llvm::StringRef Name) {
    if (auto It = Internal[I].find(Name); It != Internal[I].end())
      return std::make_pair(I, It->second);
    if (auto It = External.find(Name); It != External.end() && It->second.IsFunction)
      return std::make_pair(It->second.Input, It->second.Index);
    return std::nullopt;
  }

  /// Reachable[I][K]: function K of input I is a kernel, named by an initializer or alias, or called or
  /// taken by a reachable function.
  void markReachable() {
    Reachable.clear();
    std::vector<std::pair<unsigned, uint32_t>> Work;
    auto reach = [&](std::pair<unsigned, uint32_t> D) {
      if (!Reachable[D.first][D.second]) {
        Reachable[D.first][D.second] = true;
        Work.push_back(D);
      }
    };
    for (unsigned I = 0; I < Inputs.size(); ++I)
      Reachable.emplace_back(module(I).Functions.size(), false);
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      for (uint32_t K = 0; K < module(I).Functions.size(); ++K)
        if (module(I).Functions[K]->IsEntry && module(I).Functions[K]->HasBody)
          reach({I, K});
      forEachModuleLevelSymbolUse(module(I), [&](llvm::StringRef &N) {
        if (auto D = resolveFunction(I, N))
          reach(*D);
      });
    }
    while (!Work.empty()) {
      auto [I, K] = Work.back();
      Work.pop_back();
      forEachFunctionSymbolUse(*module(I).Functions[K], [&, I = I](llvm::StringRef &N) {
        if (auto D = resolveFunction(I, N))
          reach(*D);
      });
    }
  }

  bool keepsEveryFunction(unsigned I) {
    for (uint32_t K = 0; K < module(I).Functions.size(); ++K)
      if (module(I).Functions[K]->HasBody && !Reachable[I][K])
        return false;
    return true;
  }

  /// The names input I's kept code uses: its reachable functions, initializers and aliases.
  llvm::StringSet<> usedByKeptCode(unsigned I) {
    llvm::StringSet<> Used;
    auto use = [&](llvm::StringRef &N) { Used.insert(N); };
    forEachModuleLevelSymbolUse(module(I), use);
    for (uint32_t K = 0; K < module(I).Functions.size(); ++K)
      if (Reachable[I][K])
        forEachFunctionSymbolUse(*module(I).Functions[K], use);
    return Used;
  }

  /// Every declaration the kept code uses must find a definition: an `.extern` variable in another input
  /// (`.extern .shared` arrays are the dynamic shared memory and need none), a function without a body here or
  /// elsewhere.
  void checkReferences() {
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      ptx::Module &M = module(I);
      llvm::StringSet<> Used = usedByKeptCode(I);
      auto unresolved = [&](llvm::StringRef Name) {
        Log += "error   : Undefined reference to '" + Name.str() + "' in '" + Inputs[I].Name + "'\n";
      };
      for (const ptx::VariableDecl &V : M.Globals) {
        if (V.Link != ptx::Linkage::Extern || V.Space == ptx::StateSpace::Shared || !Used.contains(V.Name))
          continue;
        auto It = External.find(V.Name);
        if (It == External.end())
          unresolved(V.Name);
        else if (It->second.IsFunction)
          Log += "error   : '" + V.Name.str() + "' in '" + Inputs[I].Name + "' is declared as a variable but '" +
                 Inputs[It->second.Input].Name + "' defines a function of that name\n";
      }
      for (llvm::StringRef Name : unresolvedFunctions(M, Used)) {
        auto It = External.find(Name);
        if (It == External.end())
          unresolved(Name);
        else if (!It->second.IsFunction)
          Log += "error   : '" + Name.str() + "' in '" + Inputs[I].Name + "' is declared as a function but '" +
                 Inputs[It->second.Input].Name + "' defines a variable of that name\n";
      }
    }
  }

  /// Internal (no linkage) module-scope names of one input that another input also uses get a fresh name,
  /// so that both keep their own (nvcc makes its statics unique, hand-written PTX does not).
  void renameCollidingInternals() {
    std::vector<llvm::StringSet<>> Names(Inputs.size());
    llvm::StringSet<> All;
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      for (const ptx::VariableDecl &V : module(I).Globals)
        Names[I].insert(V.Name);
      for (const auto &F : module(I).Functions)
        Names[I].insert(F->Name);
      for (const auto &N : Names[I])
        All.insert(N.getKey());
    }
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      ptx::Module &M = module(I);
      llvm::StringMap<llvm::StringRef> Renames;
      auto collides = [&](llvm::StringRef Name) {
        if (External.count(Name))
          return true;
        for (unsigned J = 0; J < Inputs.size(); ++J)
          if (J != I && Names[J].contains(Name) && (J < I || !isInternalIn(J, Name)))
            return true;
        return false;
      };
      auto consider = [&](llvm::StringRef Name, bool Internal) {
        if (!Internal || Renames.count(Name) || !collides(Name))
          return;
        std::string Fresh;
        for (unsigned K = 0; Fresh.empty() || All.contains(Fresh); ++K)
          Fresh = (Name + "$link" + llvm::Twine(I) + (K ? "_" + llvm::Twine(K) : llvm::Twine())).str();
        All.insert(Fresh);
        Renames[Name] = Out.strings().save(Fresh);
      };
      for (const ptx::VariableDecl &V : M.Globals)
        consider(V.Name, V.Link == ptx::Linkage::None);
      for (const auto &F : M.Functions)
        consider(F->Name, F->Link == ptx::Linkage::None && !F->IsEntry);
      if (Renames.empty())
        continue;
      auto rename = [&](llvm::StringRef &N) {
        auto It = Renames.find(N);
        if (It != Renames.end())
          N = It->second;
      };
      for (ptx::VariableDecl &V : M.Globals)
        rename(V.Name);
      for (auto &F : M.Functions)
        rename(F->Name);
      forEachModuleSymbolUse(M, rename);
    }
  }

  /// Name is a module-scope symbol of input J without linkage (declared there and nowhere visible).
  bool isInternalIn(unsigned J, llvm::StringRef Name) {
    for (const ptx::VariableDecl &V : module(J).Globals)
      if (V.Name == Name)
        return V.Link == ptx::Linkage::None;
    for (const auto &F : module(J).Functions)
      if (F->Name == Name)
        return F->Link == ptx::Linkage::None && !F->IsEntry;
    return false;
  }

  bool isChosen(unsigned I, bool IsFunction, uint32_t Index, llvm::StringRef Name, ptx::Linkage L) {
    if (!isExternalDefinition(L))
      return true;
    const Definition &D = External.lookup(Name);
    return D.Input == I && D.IsFunction == IsFunction && D.Index == Index;
  }

  void addFunction(std::unique_ptr<ptx::Function> F) {
    Out.Order.push_back({ptx::TopLevelKind::Function, static_cast<uint32_t>(Out.Functions.size())});
    Out.Functions.push_back(std::move(F));
  }

  void addVariable(const ptx::VariableDecl &V) {
    Out.Order.push_back({ptx::TopLevelKind::Variable, static_cast<uint32_t>(Out.Globals.size())});
    Out.Globals.push_back(V);
  }

  void buildMergedModule() {
    for (unsigned I = 0; I < Inputs.size(); ++I) {
      const ptx::Module &M = module(I);
      Out.Version = std::max(Out.Version, M.Version, [](auto A, auto B) { return A.value() < B.value(); });
      Out.HasAddressSize |= M.HasAddressSize;
    }
    unsigned Best = 0;
    for (unsigned I = 1; I < Inputs.size(); ++I)
      if (module(I).Tgt.Sm > module(Best).Tgt.Sm)
        Best = I;
    Out.Tgt = module(Best).Tgt; // kernels of other inputs keep theirs: ptx::addKernelTargetPragma
    Out.Tgt.Debug = false;      // the debug sections are dropped
    Out.AddressSize = 64;

    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (uint32_t P = 0; P < module(I).Pragmas.size(); ++P) {
        Out.Order.push_back({ptx::TopLevelKind::Pragma, static_cast<uint32_t>(Out.Pragmas.size())});
        Out.Pragmas.push_back(module(I).Pragmas[P]);
      }

    // Prototypes of every device function, so that calls and address-taking work across inputs in any order.
    llvm::StringSet<> Declared;
    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (uint32_t K = 0; K < module(I).Functions.size(); ++K) {
        const ptx::Function &F = *module(I).Functions[K];
        if (F.IsEntry || !F.HasBody || !Reachable[I][K] || !isChosen(I, true, K, F.Name, F.Link))
          continue;
        auto P = std::make_unique<ptx::Function>();
        P->Name = F.Name;
        P->Link = F.Link;
        P->Sig = F.Sig;
        P->Loc = F.Loc;
        Declared.insert(F.Name);
        addFunction(std::move(P));
      }

    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (uint32_t K = 0; K < module(I).Functions.size(); ++K) {
        const ptx::Function *F = module(I).Functions[K].get();
        if (F->IsEntry && Reachable[I][K] && module(I).Tgt.Sm != Out.Tgt.Sm)
          ptx::addKernelTargetPragma(Out, F->Name, module(I).Tgt.Sm);
      }
    emitVariables();

    for (unsigned I = 0; I < Inputs.size(); ++I) {
      ptx::Module &M = module(I);
      for (uint32_t K = 0; K < M.Functions.size(); ++K) {
        std::unique_ptr<ptx::Function> &F = M.Functions[K];
        if ((F->HasBody && !Reachable[I][K]) || !isChosen(I, true, K, F->Name, F->Link))
          continue;
        if (!F->HasBody) {
          // Declarations of what a prototype above or the device library provides, once.
          bool Unused = !isDeviceLibraryFunction(*F); // checkReferences() failed the link otherwise
          if (Declared.contains(F->Name) || External.count(F->Name) || Unused || !Declared.insert(F->Name).second)
            continue;
        }
        F->Body.erase(std::remove_if(F->Body.begin(), F->Body.end(),
                                     [](const ptx::Statement &S) { return S.Kind == ptx::StatementKind::Loc; }),
                      F->Body.end());
        addFunction(std::move(F));
      }
    }
    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (const ptx::AliasDirective &A : module(I).Aliases) {
        Out.Order.push_back({ptx::TopLevelKind::Alias, static_cast<uint32_t>(Out.Aliases.size())});
        Out.Aliases.push_back(A);
      }
  }

  /// Module-scope variables, each after the variables its initializer names (which may live in another
  /// input); resolved `.extern` declarations and overridden weak definitions are left out.
  void emitVariables() {
    struct Ref {
      unsigned Input;
      uint32_t Index;
    };
    llvm::StringMap<Ref> ByName;
    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (uint32_t G = 0; G < module(I).Globals.size(); ++G) {
        const ptx::VariableDecl &V = module(I).Globals[G];
        // Resolved `.extern` declarations give way to their definitions; unresolved ones are unused here
        // (checkReferences() failed the link otherwise) unless they are dynamic shared memory.
        bool Drop = V.Link == ptx::Linkage::Extern && (External.count(V.Name) || V.Space != ptx::StateSpace::Shared);
        if (!Drop && isChosen(I, false, G, V.Name, V.Link))
          ByName.try_emplace(V.Name, Ref{I, G}); // the first of several `.extern .shared` declarations
      }
    llvm::StringSet<> Done;
    std::function<void(llvm::StringRef)> visit = [&](llvm::StringRef Name) {
      auto It = ByName.find(Name);
      if (It == ByName.end() || !Done.insert(Name).second)
        return;
      const ptx::VariableDecl &V = module(It->second.Input).Globals[It->second.Index];
      std::function<void(const ptx::Initializer &)> deps = [&](const ptx::Initializer &In) {
        if (In.K == ptx::Initializer::Kind::Symbol)
          visit(In.Name);
        for (const ptx::Initializer &E : In.Elements)
          deps(E);
      };
      if (V.HasInit)
        deps(V.Init);
      addVariable(V);
    };
    for (unsigned I = 0; I < Inputs.size(); ++I)
      for (const ptx::VariableDecl &V : module(I).Globals)
        visit(V.Name);
  }

  std::vector<LinkInput> &Inputs;
  std::string &Log;
  llvm::StringMap<Definition> External;            ///< externally visible name -> the definition the link uses
  std::vector<llvm::StringMap<uint32_t>> Internal; ///< per input: its functions without linkage, by name
  std::vector<std::vector<bool>> Reachable;        ///< per input and function: kept in the result
  ptx::Module Out;
};

} // namespace

llvm::Expected<std::string> ptxforge::driver::linkPtxModules(std::vector<LinkInput> &Inputs, std::string &Log) {
  return ModuleLinker(Inputs, Log).link();
}

llvm::Error Linker::addPtx(llvm::StringRef Text, std::string Name, JitLogs &Logs) {
  std::string Ptx = Text.take_until([](char C) { return C == 0; }).str();
  auto Front = ptx::runFrontend(std::make_unique<ptx::SourceBuffer>(Name, std::move(Ptx)));
  if (!Front->ok()) {
    for (const ptx::Diagnostic &D : Front->Diags.sorted())
      Logs.Error += ptx::formatDiagnostic(*Front->Source, D) + "\n";
    const ptx::Module *M = Front->module();
    if (M && M->Version.value() > ptx::MaxSupportedPtxVersion)
      return makeError(Status::UnsupportedPtxVersion, "PTX ISA " + ptx::ptxVersionName(M->Version.value()));
    return makeError(Status::InvalidPtx, "the PTX has errors");
  }
  Inputs.push_back({std::move(Front), std::move(Name)});
  return llvm::Error::success();
}

llvm::Error Linker::addImage(const ModuleSource &Source, std::string Name, JitLogs &Logs) {
  unsigned CC = Options.TargetCc.value_or(deviceProperties().computeCapability());
  // The selection writes a log of its own: the link's log keeps what earlier inputs put there.
  JitLogs Selection;
  auto Selected = selectPtx(Source, CC, Selection, /*PtxText=*/false);
  Logs.Info += Selection.Info;
  if (!Selected) {
    Logs.Error += (Name.empty() ? "" : Name + ": ") + Selection.Error + "\n";
    return Selected.takeError();
  }
  if (Selected->Empty)
    return llvm::Error::success();
  return addPtx(Selected->Text, Name.empty() ? std::move(Selected->Name) : std::move(Name), Logs);
}

llvm::Error Linker::addCubin(const ModuleSource &Source, llvm::StringRef Bytes, JitLogs &Logs) {
  std::unique_ptr<llvm::MemoryBuffer> File;
  std::string Name = Source.K == ModuleSource::Kind::File ? Source.Path : "<cubin input>";
  if (Source.K == ModuleSource::Kind::File) {
    auto Buffer = llvm::MemoryBuffer::getFile(Source.Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!Buffer) {
      Logs.Error += "ptxforge: cannot read " + Source.Path + ": " + Buffer.getError().message() + "\n";
      return makeError(Status::FileNotFound, "cubin input");
    }
    File = std::move(*Buffer);
    Bytes = File->getBuffer();
  }
  // A cubin is an ELF file of NVIDIA SASS, which cannot run here; bytes that are no ELF file are no cubin.
  if (!Bytes.starts_with("\x7f"
                         "ELF")) {
    Logs.Error += "ptxforge: " + Name + " is not a cubin (no ELF header)\n";
    return makeError(Status::InvalidImage, "cubin input");
  }
  Logs.Error += "ptxforge: NVIDIA cubins (SASS) cannot be linked; add PTX instead\n";
  return makeError(Status::NoBinaryForGpu, "cubin input");
}

llvm::Expected<llvm::StringRef> Linker::complete(JitLogs &Logs) {
  if (!Output.empty())
    return llvm::StringRef(Output.data(), Output.size());
  if (Inputs.empty()) {
    Logs.Error = "ptxforge: nothing to link\n";
    return makeError(Status::InvalidValue, "no inputs");
  }
  bool Merged = Inputs.size() > 1;
  auto Linked = linkPtxModules(Inputs, Logs.Error);
  Inputs.clear();
  if (!Linked)
    return Linked.takeError();
  // The merged text is what cuModuleLoadData will see: check it here so that a link problem is reported by
  // the link, not by the load.
  auto Check = Merged ? ptx::runFrontend(std::make_unique<ptx::SourceBuffer>("<linked>", *Linked)) : nullptr;
  if (Check && !Check->ok()) {
    for (const ptx::Diagnostic &D : Check->Diags.sorted())
      Logs.Error += ptx::formatDiagnostic(*Check->Source, D) + "\n";
    return makeError(Status::Unknown, "internal error: the linked PTX does not verify");
  }
  Output = std::move(*Linked);
  Output.push_back('\0');
  return llvm::StringRef(Output.data(), Output.size());
}

std::vector<std::string> ptxforge::driver::unresolvedExternFunctions(const ptx::Module &M) {
  std::vector<std::string> Out;
  for (llvm::StringRef Name : unresolvedFunctions(M, usedNames(M)))
    Out.push_back(Name.str());
  return Out;
}
