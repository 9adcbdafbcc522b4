// The CUDA device library functions PTX declares `.extern` and expects the driver to provide: vprintf (device
// printf) and __assertfail (device assert). Output of one launch is collected and written to the process's
// stdout in (block, thread, call) order when the launch ends, so it is complete lines in a deterministic order.
#include "Runtime.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace ptxforge::codegen;
using namespace ptxforge::codegen::exec;

namespace {

struct PrintRecord {
  uint64_t Block;
  uint32_t Thread;
  uint64_t Sequence;
  std::string Text;
};

std::mutex PrintLock;
std::vector<PrintRecord> Pending;
uint64_t NextSequence = 0;

uint64_t linearBlock(const ThreadContext *C) {
  return (uint64_t(C->Ctaid[2]) * C->Nctaid[1] + C->Ctaid[1]) * C->Nctaid[0] + C->Ctaid[0];
}

/// Formats like printf, reading arguments from the packed buffer vprintf receives: each argument at its
/// natural alignment (4 bytes for int-sized integers and chars, 8 for 64-bit integers, doubles and pointers).
std::string format(const char *Fmt, const char *Args) {
  std::string Out;
  size_t Off = 0;
  auto take = [&](size_t Size) {
    Off = (Off + Size - 1) / Size * Size;
    const char *P = Args ? Args + Off : nullptr;
    Off += Size;
    return P;
  };
  for (const char *F = Fmt; *F;) {
    if (*F != '%') {
      Out += *F++;
      continue;
    }
    const char *Start = F++;
    if (*F == '%') {
      Out += '%';
      ++F;
      continue;
    }
    while (*F && strchr("-+ #0123456789.*", *F))
      ++F;
    int Long = 0;
    while (*F && strchr("hlLqjzt", *F)) {
      if (*F == 'l' || *F == 'L' || *F == 'q' || *F == 'j' || *F == 'z' || *F == 't')
        ++Long;
      ++F;
    }
    char Conv = *F ? *F++ : 0;
    std::string Spec(Start, F);
    char Buf[512];
    Buf[0] = 0;
    if (strchr("diouxXc", Conv) && Conv) {
      if (Long) {
        int64_t V = 0;
        if (const char *P = take(8))
          memcpy(&V, P, 8);
        snprintf(Buf, sizeof Buf, Spec.c_str(), V);
      } else {
        int32_t V = 0;
        if (const char *P = take(4))
          memcpy(&V, P, 4);
        std::string S32 = Spec;
        S32.erase(std::remove_if(S32.begin(), S32.end(), [](char C) { return C == 'h'; }), S32.end());
        snprintf(Buf, sizeof Buf, S32.c_str(), V);
      }
    } else if (Conv && strchr("fFeEgGaA", Conv)) {
      double V = 0;
      if (const char *P = take(8))
        memcpy(&V, P, 8);
      snprintf(Buf, sizeof Buf, Spec.c_str(), V);
    } else if (Conv == 's' || Conv == 'p') {
      uint64_t V = 0;
      if (const char *P = take(8))
        memcpy(&V, P, 8);
      if (Conv == 's')
        snprintf(Buf, sizeof Buf, Spec.c_str(), V ? reinterpret_cast<const char *>(V) : "(null)");
      else
        snprintf(Buf, sizeof Buf, "0x%llx", static_cast<unsigned long long>(V));
    } else {
      Out += Spec; // unknown conversion: printed as written, as the GPU does
      continue;
    }
    Out += Buf;
  }
  return Out;
}

} // namespace

extern "C" {

/// `vprintf(.param .b64 fmt, .param .b64 args)` returning the number of arguments, through param pointers.
static void ptxrt_vprintf(ThreadContext *C, int32_t *Ret, const uint64_t *Fmt, const uint64_t *Args) {
  const char *F = reinterpret_cast<const char *>(*Fmt);
  std::string Text = F ? format(F, reinterpret_cast<const char *>(*Args)) : std::string();
  std::scoped_lock L(PrintLock);
  Pending.push_back({linearBlock(C), C->LinearTid, NextSequence++, std::move(Text)});
  if (Ret)
    *Ret = 0;
}

/// `__assertfail(message, file, line, function, charSize)`: the launch fails with CUDA_ERROR_ASSERT.
static void ptxrt_assertfail(ThreadContext *C, const uint64_t *Message, const uint64_t *File, const uint32_t *Line,
                             const uint64_t *Function, const uint64_t *) {
  BlockState &B = blockOf(C);
  B.Trapped = true;
  if (B.Error.empty()) {
    auto str = [](const uint64_t *P) { return P && *P ? reinterpret_cast<const char *>(*P) : "?"; };
    B.Error = std::string(str(File)) + ":" + std::to_string(Line ? *Line : 0) + ": " + str(Function) + ": block: [" +
              std::to_string(C->Ctaid[0]) + "," + std::to_string(C->Ctaid[1]) + "," + std::to_string(C->Ctaid[2]) +
              "], thread: [" + std::to_string(C->Tid[0]) + "," + std::to_string(C->Tid[1]) + "," +
              std::to_string(C->Tid[2]) + "] Assertion `" + str(Message) + "` failed.";
    B.Fault = LaunchFault::Assert;
    // NVIDIA's driver prints the failed assertion on stderr too.
    std::fprintf(stderr, "%s\n", B.Error.c_str());
    std::fflush(stderr);
  }
  std::longjmp(B.ExitPoints[B.BlockLoop ? 0 : C->LinearTid].Buf, 1);
}
}

void ptxforge::codegen::exec::flushDevicePrintf() {
  std::vector<PrintRecord> Records;
  {
    std::scoped_lock L(PrintLock);
    Records.swap(Pending);
  }
  if (Records.empty())
    return;
  std::stable_sort(Records.begin(), Records.end(), [](const PrintRecord &A, const PrintRecord &B) {
    return std::tie(A.Block, A.Thread, A.Sequence) < std::tie(B.Block, B.Thread, B.Sequence);
  });
  for (const PrintRecord &R : Records)
    fwrite(R.Text.data(), 1, R.Text.size(), stdout);
  fflush(stdout);
}

void ptxforge::codegen::exec::registerDeviceLibrary(HelperTable &T) {
  T.insert(T.end(), {PTXRT_HELPER(ptxrt_vprintf), PTXRT_HELPER(ptxrt_assertfail)});
}
