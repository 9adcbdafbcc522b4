// Front-end throughput benchmark: parse + verify MB/s and peak memory on cub_big.ptx (2 MB, 41 kernels) and on
// a >= 20 MB module made by concatenating its functions (renamed). Bar (issue 2): >= 20 MB/s on both cores,
// peak memory <= 20x the input. Prints one line per (input, threads) with the ratio to the bar.
#include "ptxforge/ptx/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace ptxforge::ptx;

static long currentRssKiB() {
  std::ifstream S("/proc/self/statm");
  long Pages = 0, Resident = 0;
  S >> Pages >> Resident;
  return Resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// Resets the kernel's peak-RSS counter so each measurement sees only its own peak.
static void resetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

static long peakRssKiB() {
  std::ifstream S("/proc/self/status");
  std::string Line;
  while (std::getline(S, Line))
    if (Line.rfind("VmHWM:", 0) == 0)
      return std::stol(Line.substr(6));
  return 0;
}

static std::string concatenated(const std::string &Module, size_t MinBytes) {
  size_t First = Module.find(".visible .entry");
  if (First == std::string::npos)
    return Module;
  std::string Header = Module.substr(0, First), Body = Module.substr(First);
  std::string Out = Header;
  std::regex Entry(R"(\.entry (\w+)\()");
  for (int K = 0; Out.size() < MinBytes; ++K)
    Out += std::regex_replace(Body, Entry, ".entry $1_copy" + std::to_string(K) + "(");
  return Out;
}

static void measure(const std::string &Name, const std::string &Text, unsigned Threads, int Runs) {
  std::vector<double> Seconds;
  long PeakDelta = 0;
  bool Clean = true;
  for (int R = 0; R < Runs; ++R) {
    auto Source = std::make_unique<SourceBuffer>(Name, Text);
    resetPeakRss();
    long Before = currentRssKiB();
    ParseOptions Options;
    Options.Threads = Threads;
    auto T0 = std::chrono::steady_clock::now();
    auto Result = runFrontend(std::move(Source), Options);
    auto T1 = std::chrono::steady_clock::now();
    PeakDelta = std::max(PeakDelta, peakRssKiB() - Before);
    Clean &= Result->ok();
    Seconds.push_back(std::chrono::duration<double>(T1 - T0).count());
  }
  std::sort(Seconds.begin(), Seconds.end());
  double MB = Text.size() / 1e6, Median = Seconds[Seconds.size() / 2];
  double Rate = MB / Median, MemRatio = PeakDelta * 1024.0 / Text.size();
  std::printf("%-28s %7.1f MB  threads=%u  %7.1f MB/s (bar 20: x%.2f)  peak +%6.1f MB = %5.2fx input (bar 20x)%s\n",
              Name.c_str(), MB, Threads, Rate, Rate / 20.0, PeakDelta / 1024.0, MemRatio,
              Clean ? "" : "  [DIAGNOSTICS!]");
}

int main(int argc, char **argv) {
  std::string Path = argc > 1 ? argv[1] : PTXFORGE_SHARED_DIR "/bench/cub_big.ptx";
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf) {
    std::fprintf(stderr, "bench_parse: cannot read %s\n", Path.c_str());
    return 1;
  }
  std::string Text = (*Buf)->getBuffer().str();
  std::string Big = concatenated(Text, 20u << 20);
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("parse+verify throughput (median of runs), %u cores\n", Cores);
  for (unsigned T : {1u, Cores}) {
    measure("cub_big.ptx", Text, T, 9);
    measure("cub_big x" + std::to_string(Big.size() / Text.size()) + " (concatenated)", Big, T, 3);
  }
  return 0;
}
