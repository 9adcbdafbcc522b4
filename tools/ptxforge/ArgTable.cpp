// The one table of single-dash flags NVIDIA's tools spell and the long options they mean here.
#include "ArgTable.h"

#include <cstring>

using namespace ptxforge::tools;

namespace {
struct FlagMapping {
  const char *Dash;     ///< as users type it after '-' (nvcc / cuobjdump spelling)
  const char *LongName; ///< the CLI11 long option
};
const FlagMapping Table[] = {
    {"arch", "--arch"},
    {"code", "--code"},
    {"gencode", "--gencode"},
    {"lptx", "--list-ptx"},
    {"lelf", "--list-elf"},
    {"ptx", "--dump-ptx"},
    {"elf", "--dump-elf"},
    {"all", "--all"},
    {"xptx", "--extract-ptx"},
    {"xelf", "--extract-elf"},
    {"fatbin", "--fatbin"},
    {"Xptxas", "--Xptxas"},
    {"sm", "--sm"},
};

/// Options whose next argument is always their value, even when it starts with '-' (`-Xptxas -v`): CLI11
/// would read such a value as an option of its own, so the two are joined with '='.
const char *const JoinedValueOptions[] = {"--Xptxas", "--ptxas-options"};
} // namespace

std::vector<std::string> ptxforge::tools::mapSingleDashFlags(const std::vector<std::string> &Args) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    std::string Mapped = A;
    if (A.size() > 2 && A[0] == '-' && A[1] != '-') {
      std::string Body = A.substr(1);
      std::string Name = Body.substr(0, Body.find('='));
      for (const FlagMapping &M : Table)
        if (Name == M.Dash) {
          Mapped = std::string(M.LongName) + Body.substr(Name.size());
          break;
        }
    }
    for (const char *Joined : JoinedValueOptions)
      if (Mapped == Joined && I + 1 < Args.size()) {
        Mapped += "=" + Args[++I];
        break;
      }
    Out.push_back(Mapped);
  }
  return Out;
}
