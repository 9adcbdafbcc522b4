// The emulated device's properties: compute capability from PTXFORGE_DEVICE_CC, memory and parallelism from
// the host, per-generation limits from NVIDIA's published tables for that compute capability.
#include "ptxforge/driver/Device.h"
#include "ptxforge/driver/Status.h"

#include "ptxforge/fatbin/Targets.h"
#include "ptxforge/ptx/Architectures.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace ptxforge::driver;

// The default device is the architecture table's entry: the embedding API accepts it and -arch=native plans for it
// from there.
static_assert(DefaultComputeCapability == ptxforge::ptx::DefaultDeviceSm);

llvm::Expected<std::vector<unsigned>> ptxforge::driver::deviceComputeCapabilitiesFromEnvironment() {
  const char *E = std::getenv("PTXFORGE_DEVICE_CC");
  if (!E)
    return std::vector<unsigned>{DefaultComputeCapability};
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  llvm::StringRef(E).split(Parts, ',');
  if (Parts.size() > MaxDevices)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "PTXFORGE_DEVICE_CC: more than " + std::to_string(MaxDevices) + " devices");
  std::vector<unsigned> CCs;
  for (llvm::StringRef Part : Parts) {
    auto CC = fatbin::parseComputeCapability(Part.trim());
    if (!CC)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "PTXFORGE_DEVICE_CC: " + llvm::toString(CC.takeError()));
    CCs.push_back(*CC);
  }
  return CCs;
}

llvm::Expected<unsigned> ptxforge::driver::deviceComputeCapabilityFromEnvironment() {
  auto CCs = deviceComputeCapabilitiesFromEnvironment();
  if (!CCs)
    return CCs.takeError();
  return CCs->front();
}

namespace {

unsigned hostClockKHz() {
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  while (std::getline(In, Line)) {
    llvm::StringRef L(Line);
    if (!L.starts_with("cpu MHz"))
      continue;
    double MHz = 0;
    if (!L.split(':').second.trim().getAsDouble(MHz) && MHz > 0)
      return static_cast<unsigned>(MHz * 1000);
  }
  return 2000000;
}

uint64_t parseBytes(llvm::StringRef Text) {
  llvm::StringRef T = Text.trim();
  uint64_t Scale = 1;
  if (T.consume_back("K") || T.consume_back("k"))
    Scale = 1ull << 10;
  else if (T.consume_back("M") || T.consume_back("m"))
    Scale = 1ull << 20;
  else if (T.consume_back("G") || T.consume_back("g"))
    Scale = 1ull << 30;
  else if (T.consume_back("T") || T.consume_back("t"))
    Scale = 1ull << 40;
  uint64_t V = 0;
  if (T.getAsInteger(10, V))
    return 0;
  return V * Scale;
}

std::string machineId() {
  std::ifstream In("/etc/machine-id");
  std::string Id;
  std::getline(In, Id);
  if (Id.empty()) {
    char Host[256] = {};
    gethostname(Host, sizeof Host - 1);
    Id = Host;
  }
  return Id;
}

} // namespace

DeviceProperties ptxforge::driver::makeDeviceProperties(unsigned Major, unsigned Minor, int Ordinal) {
  DeviceProperties P;
  P.CcMajor = Major;
  P.CcMinor = Minor;
  P.Name = "ptxforge CPU (sm_" + std::to_string(Major * 10 + Minor) + ")";
  P.MultiprocessorCount = std::max(1u, std::thread::hardware_concurrency());
  P.ClockRateKHz = hostClockKHz();
  long L3 = sysconf(_SC_LEVEL3_CACHE_SIZE), L2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  P.L2CacheBytes = static_cast<unsigned>(L3 > 0 ? L3 : L2 > 0 ? L2 : 32l << 20);
  uint64_t Phys = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  P.TotalMemory = Phys ? Phys : 16ull << 30;
  if (const char *M = std::getenv("PTXFORGE_DEVICE_MEMORY"))
    if (uint64_t V = parseBytes(M))
      P.TotalMemory = V;

  // Shared memory and occupancy limits by generation (CUDA C Programming Guide, compute capabilities table).
  unsigned CC = Major * 10 + Minor;
  unsigned OptinKB = 48, PerSmKB = 64, ThreadsPerSm = 2048, BlocksPerSm = 32, Reserved = 1024;
  if (CC < 70) {
    OptinKB = 48, PerSmKB = 64, BlocksPerSm = 32, Reserved = 0;
  } else if (CC < 75) {
    OptinKB = 96, PerSmKB = 96, Reserved = 0;
  } else if (CC < 80) {
    OptinKB = 64, PerSmKB = 64, ThreadsPerSm = 1024, BlocksPerSm = 16, Reserved = 0;
  } else if (CC == 80 || CC == 87) {
    OptinKB = 163, PerSmKB = 164, BlocksPerSm = CC == 87 ? 16 : 32;
  } else if (CC < 90) {
    OptinKB = 99, PerSmKB = 100, ThreadsPerSm = 1536, BlocksPerSm = CC == 89 ? 24 : 16;
  } else if (CC >= 120 && CC < DefaultComputeCapability) {
    OptinKB = 99, PerSmKB = 100, ThreadsPerSm = 1536; // 12.x: the GeForce/workstation Blackwell parts
  } else {
    // 9.0, 10.x, 11.0, and the default device newer than all of them: the data-centre parts' limits, so that a
    // kernel sized for an H100 or B200 runs on the default device.
    OptinKB = 227, PerSmKB = 228;
  }
  P.SharedMemoryPerBlockOptin = OptinKB * 1024;
  P.SharedMemoryPerMultiprocessor = PerSmKB * 1024;
  P.MaxThreadsPerMultiprocessor = ThreadsPerSm;
  P.MaxBlocksPerMultiprocessor = BlocksPerSm;
  P.ReservedSharedMemoryPerBlock = Reserved;

  // A UUID that stays the same on this machine for this compute capability (FNV-1a over the machine id).
  std::string Seed = machineId() + "/ptxforge/" + std::to_string(CC);
  if (Ordinal) // device 0 keeps the UUID it had before several devices could be listed
    Seed += "/" + std::to_string(Ordinal);
  P.PciBus = static_cast<uint32_t>(Ordinal);
  uint64_t H1 = 1469598103934665603ull, H2 = 1099511628211ull * 31;
  for (char C : Seed) {
    H1 = (H1 ^ uint8_t(C)) * 1099511628211ull;
    H2 = (H2 ^ uint8_t(C)) * 1469598103934665603ull + 7;
  }
  for (int I = 0; I < 8; ++I) {
    P.Uuid[I] = uint8_t(H1 >> (8 * I));
    P.Uuid[8 + I] = uint8_t(H2 >> (8 * I));
  }
  P.Uuid[6] = (P.Uuid[6] & 0x0f) | 0x40; // RFC 4122 version 4 layout
  P.Uuid[8] = (P.Uuid[8] & 0x3f) | 0x80;
  return P;
}

namespace {

const std::vector<DeviceProperties> &allDeviceProperties() {
  static const std::vector<DeviceProperties> All = [] {
    std::vector<unsigned> CCs{DefaultComputeCapability};
    if (auto FromEnvironment = deviceComputeCapabilitiesFromEnvironment())
      CCs = *FromEnvironment;
    else
      llvm::consumeError(FromEnvironment.takeError()); // Driver::initialize reports it
    std::vector<DeviceProperties> Props;
    for (unsigned I = 0; I < CCs.size(); ++I)
      Props.push_back(makeDeviceProperties(CCs[I] / 10, CCs[I] % 10, static_cast<int>(I)));
    return Props;
  }();
  return All;
}

} // namespace

const DeviceProperties &ptxforge::driver::deviceProperties(int Device) {
  const auto &All = allDeviceProperties();
  return All[Device >= 0 && static_cast<size_t>(Device) < All.size() ? Device : 0];
}

int ptxforge::driver::deviceCount() { return static_cast<int>(allDeviceProperties().size()); }
