// What bench_kernels and bench_idioms share besides the driver-API harness: output verification, medians and
// geometric means, and starting the child processes each (thread count, kernel) runs in.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ptxforge::bench {

enum class Elem { F32, F64, U32, U8 };
/// What a kernel does with a buffer: only its outputs are compared.
enum class Role { In, Out, InOut };

/// The pause before each timed run: libgomp's threads spin for a while after a parallel region, and ptxforge's
/// workers would share their CPUs with that spin (bench/README.md, bench_kernels).
constexpr int QuietMs = 20;

/// Bytes rounded up to whole 4 KiB pages (at least one page).
size_t pageRounded(size_t Bytes);
struct FreeDeleter {
  void operator()(void *P) const;
};
using HostBuffer = std::unique_ptr<char, FreeDeleter>;
/// Page-aligned host memory, zeroed (its first touch, outside any timing); without memory, Tool's complaint and
/// exit status 3.
HostBuffer zeroedPages(size_t Bytes, const char *Tool);
/// Writes Text and a newline to Path (a child's result, the --json report); 0, or 1 if it could not.
int writeTextFile(const std::string &Path, const std::string &Text);
size_t elemSize(Elem E);

/// |got - ref| <= Abs + Rel * |ref| for floats (integers: exact). BadFraction: the share of elements allowed to
/// miss that (kernels whose float rounding can flip a discrete outcome, e.g. an escape-time iteration count).
struct Tolerance {
  double Abs = 0, Rel = 0, BadFraction = 0;
};

struct CheckResult {
  bool Ok = true;
  std::string Message;
  double MaxErr = 0; ///< largest |got - ref| (floats)
};

/// Compares Count elements of Type named Name.
CheckResult compareBuffer(const std::string &Name, Elem Type, size_t Count, const Tolerance &Tol, const void *Got,
                          const void *Ref);

double median(std::vector<double> V);
double geomean(const std::vector<double> &V);

/// Runs Argv with Env, stdout/stderr optionally to /dev/null; returns the wait status (or -1).
int spawnWait(const std::vector<std::string> &Argv, const std::vector<std::string> &Env, bool Quiet);
std::vector<std::string> currentEnv();
void setEnv(std::vector<std::string> &Env, const std::string &Key, const std::string &Value);
/// This executable's path (/proc/self/exe), else Argv0.
std::string selfPath(const char *Argv0);
/// The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them.
std::string loadAverage();

/// The whole file at Path; Ok says whether it could be opened.
std::string readFile(const std::string &Path, bool &Ok);
/// "a,b,c" -> {a, b, c}, empty parts dropped (the benchmarks' list options).
std::vector<std::string> splitList(const std::string &S);
/// The value after option Argv[I], I moved onto it; without one, Tool's complaint and exit status 2.
std::string optionValue(int Argc, char **Argv, int &I, const char *Tool);

/// The options both benchmarks take: thread counts, the report, and the protocol between the parent and the child
/// process that runs one (thread count, kernel) phase.
struct SharedOptions {
  std::vector<int> Threads; ///< empty: 1 and all
  unsigned Timeout = 900;   ///< seconds per child
  bool Verbose = false;
  std::string JsonOut;
  // Child mode.
  int Phase = 0; ///< the phase's thread count
  std::string Kernel, ResultFile;
};
/// A benchmark's own options: takes option A (its value from Next) and says whether it was one of them.
using OptionParser = std::function<bool(const std::string &A, const std::function<std::string()> &Next)>;
/// Parses Argv into O (SharedOptions) and through Own; -h prints Usage and exits 0; an unknown option is Tool's
/// complaint, Usage, and false.
bool parseCommandLine(int Argc, char **Argv, const char *Tool, void (*Usage)(), SharedOptions &O,
                      const OptionParser &Own);

/// The command line of a child process that runs Kernel with Threads threads and writes its result to ResultFile
/// (SharedOptions' child mode, as parseCommandLine reads it); the benchmark appends its own options.
std::vector<std::string> childCommand(const std::string &Self, int Threads, const std::string &Kernel,
                                      const std::string &ResultFile, unsigned Timeout);

/// A benchmark's main(): its options parsed (exit status 2 on a bad one), then the child phase it was started for
/// (--phase) or the parent, which starts the children.
template <class Options>
int benchMain(int Argc, char **Argv, bool (*Parse)(int, char **, Options &), int (*Child)(const Options &),
              int (*Parent)(const Options &, const char *)) {
  Options O;
  if (!Parse(Argc, Argv, O))
    return 2;
  return O.Phase ? Child(O) : Parent(O, Argv[0]);
}

} // namespace ptxforge::bench
