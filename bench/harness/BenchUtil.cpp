// Verification, statistics and child processes shared by the benchmarks (BenchUtil.h).
#include "harness/BenchUtil.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ptxforge::bench {

size_t elemSize(Elem E) {
  switch (E) {
  case Elem::F64:
    return 8;
  case Elem::U8:
    return 1;
  default:
    return 4;
  }
}

namespace {

template <class F>
CheckResult compareFloats(const std::string &Name, size_t Count, const Tolerance &Tol, const F *G, const F *R) {
  CheckResult C;
  size_t Bad = 0, First = 0;
  double MaxErr = 0;
  for (size_t I = 0; I < Count; ++I) {
    double Gv = G[I], Rv = R[I];
    if (std::isnan(Gv) && std::isnan(Rv))
      continue;
    double Err = std::fabs(Gv - Rv);
    if (!(Err <= Tol.Abs + Tol.Rel * std::fabs(Rv)) && !Bad++) // NaN-safe
      First = I;
    MaxErr = std::isnan(Err) ? INFINITY : std::max(MaxErr, Err);
  }
  C.MaxErr = MaxErr;
  if (Bad > Tol.BadFraction * double(Count)) {
    char Buf[320];
    std::snprintf(Buf, sizeof Buf, "%s: %zu of %zu differ (first [%zu] = %.17g, expected %.17g; max |err| %.3g)",
                  Name.c_str(), Bad, Count, First, double(G[First]), double(R[First]), MaxErr);
    C.Ok = false;
    C.Message = Buf;
  }
  return C;
}

} // namespace

CheckResult compareBuffer(const std::string &Name, Elem Type, size_t Count, const Tolerance &Tol, const void *Got,
                          const void *Ref) {
  if (Type == Elem::F32)
    return compareFloats(Name, Count, Tol, static_cast<const float *>(Got), static_cast<const float *>(Ref));
  if (Type == Elem::F64)
    return compareFloats(Name, Count, Tol, static_cast<const double *>(Got), static_cast<const double *>(Ref));
  CheckResult C;
  size_t Sz = elemSize(Type), Bad = 0, First = 0;
  const auto *G = static_cast<const unsigned char *>(Got), *F = static_cast<const unsigned char *>(Ref);
  for (size_t I = 0; I < Count; ++I)
    if (std::memcmp(G + I * Sz, F + I * Sz, Sz) && !Bad++)
      First = I;
  if (Bad > Tol.BadFraction * double(Count)) {
    uint32_t Gv = 0, Fv = 0;
    std::memcpy(&Gv, G + First * Sz, Sz);
    std::memcpy(&Fv, F + First * Sz, Sz);
    C.Ok = false;
    C.Message = Name + ": " + std::to_string(Bad) + " of " + std::to_string(Count) + " differ (first [" +
                std::to_string(First) + "] = " + std::to_string(Gv) + ", expected " + std::to_string(Fv) + ")";
  }
  return C;
}

double median(std::vector<double> V) {
  if (V.empty())
    return NAN;
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

double geomean(const std::vector<double> &V) {
  if (V.empty())
    return NAN;
  double L = 0;
  for (double X : V)
    L += std::log(X);
  return std::exp(L / V.size());
}

int spawnWait(const std::vector<std::string> &Argv, const std::vector<std::string> &Env, bool Quiet) {
  std::vector<char *> A, E;
  for (const std::string &S : Argv)
    A.push_back(const_cast<char *>(S.c_str()));
  A.push_back(nullptr);
  for (const std::string &S : Env)
    E.push_back(const_cast<char *>(S.c_str()));
  E.push_back(nullptr);
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  if (Quiet) {
    posix_spawn_file_actions_addopen(&FA, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&FA, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t Pid;
  int Rc = posix_spawn(&Pid, A[0], &FA, nullptr, A.data(), E.data());
  posix_spawn_file_actions_destroy(&FA);
  if (Rc != 0)
    return -1;
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return Status;
}

std::vector<std::string> currentEnv() {
  std::vector<std::string> Env;
  for (char **P = environ; *P; ++P)
    Env.push_back(*P);
  return Env;
}

void setEnv(std::vector<std::string> &Env, const std::string &Key, const std::string &Value) {
  std::string Prefix = Key + "=";
  Env.erase(std::remove_if(Env.begin(), Env.end(), [&](const std::string &S) { return S.rfind(Prefix, 0) == 0; }),
            Env.end());
  Env.push_back(Prefix + Value);
}

std::string selfPath(const char *Argv0) {
  char Buf[4096];
  ssize_t N = readlink("/proc/self/exe", Buf, sizeof Buf - 1);
  return N > 0 ? std::string(Buf, N) : std::string(Argv0);
}

std::string loadAverage() {
  std::ifstream L("/proc/loadavg");
  std::string A, B, C;
  return L >> A >> B >> C ? A + " " + B + " " + C : "?";
}

} // namespace ptxforge::bench

std::vector<std::string> ptxforge::bench::splitList(const std::string &S) {
  std::vector<std::string> Out;
  std::stringstream SS(S);
  std::string Part;
  while (std::getline(SS, Part, ','))
    if (!Part.empty())
      Out.push_back(Part);
  return Out;
}

std::string ptxforge::bench::optionValue(int Argc, char **Argv, int &I, const char *Tool) {
  if (I + 1 >= Argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", Tool, Argv[I]);
    std::exit(2);
  }
  return Argv[++I];
}

namespace {

bool parseSharedOption(const std::string &A, const std::function<std::string()> &Next,
                       ptxforge::bench::SharedOptions &O) {
  if (A == "--threads")
    for (const std::string &T : ptxforge::bench::splitList(Next()))
      O.Threads.push_back(std::max(1, std::atoi(T.c_str())));
  else if (A == "--timeout")
    O.Timeout = static_cast<unsigned>(std::max(1, std::atoi(Next().c_str())));
  else if (A == "--json")
    O.JsonOut = Next();
  else if (A == "-v" || A == "--verbose")
    O.Verbose = true;
  else if (A == "--phase")
    O.Phase = std::max(1, std::atoi(Next().c_str()));
  else if (A == "--kernel")
    O.Kernel = Next();
  else if (A == "--result-file")
    O.ResultFile = Next();
  else
    return false;
  return true;
}

} // namespace

bool ptxforge::bench::parseCommandLine(int Argc, char **Argv, const char *Tool, void (*Usage)(), SharedOptions &O,
                                       const OptionParser &Own) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    std::function<std::string()> Next = [&] { return optionValue(Argc, Argv, I, Tool); };
    if (parseSharedOption(A, Next, O) || Own(A, Next))
      continue;
    if (A == "-h" || A == "--help") {
      Usage();
      std::exit(0);
    }
    std::fprintf(stderr, "%s: unknown option '%s'\n", Tool, A.c_str());
    Usage();
    return false;
  }
  return true;
}

size_t ptxforge::bench::pageRounded(size_t Bytes) { return (std::max<size_t>(Bytes, 1) + 4095) & ~size_t(4095); }

void ptxforge::bench::FreeDeleter::operator()(void *P) const { std::free(P); }

ptxforge::bench::HostBuffer ptxforge::bench::zeroedPages(size_t Bytes, const char *Tool) {
  size_t Rounded = pageRounded(Bytes);
  HostBuffer H(static_cast<char *>(std::aligned_alloc(4096, Rounded)));
  if (!H) {
    std::fprintf(stderr, "%s: out of memory (%zu bytes)\n", Tool, Bytes);
    std::exit(3);
  }
  std::memset(H.get(), 0, Rounded);
  return H;
}

std::vector<std::string> ptxforge::bench::childCommand(const std::string &Self, int Threads, const std::string &Kernel,
                                                       const std::string &ResultFile, unsigned Timeout) {
  return {Self,       "--phase",   std::to_string(Threads), "--kernel", Kernel, "--result-file",
          ResultFile, "--timeout", std::to_string(Timeout)};
}

int ptxforge::bench::writeTextFile(const std::string &Path, const std::string &Text) {
  std::ofstream Out(Path);
  Out << Text << "\n";
  return Out ? 0 : 1;
}

std::string ptxforge::bench::readFile(const std::string &Path, bool &Ok) {
  std::ifstream In(Path, std::ios::binary);
  Ok = static_cast<bool>(In);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}
