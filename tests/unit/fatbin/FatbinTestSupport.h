// Helpers shared by the fatbin unit tests: where the samples are, reading them, and unwrapping
// llvm::Expected inside doctest checks.
#pragma once

#include "ptxforge/fatbin/Fatbinary.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace ptxforge::fatbin::test {

inline std::string samplePath(const std::string &Name) { return std::string(PTXFORGE_SHARED_DIR) + "/fatbins/" + Name; }

/// Every .fatbin sample (the ELF executable fb_main_exe.bin is handled separately).
inline const std::vector<std::string> &fatbinSamples() {
  static const std::vector<std::string> Names = {
      "fb_fam_cp100f.fatbin",
      "fb_fam_sm100f.fatbin",
      "fb_from_exe.fatbin",
      "fb_ptx_only_compute75.fatbin",
      "fb_ptx_only_compute75_compress_all.fatbin",
      "fb_sass_only_sm90.fatbin",
      "fb_sel_a_sm75_cp75.fatbin",
      "fb_sel_b_sm80_cp80_sm90.fatbin",
      "fb_sel_c_cp75_cp90.fatbin",
      "fb_sel_d_cp100.fatbin",
      "fb_sel_e1_sm90a.fatbin",
      "fb_sel_e2_cp90a.fatbin",
      "fb_sel_e3_sm90a_cp90a.fatbin",
      "fb_sm75_sm90_compress_all.fatbin",
      "fb_sm75_sm90_compress_mode_size.fatbin",
      "fb_sm75_sm90_default.fatbin",
      "fb_sm75_sm90_no_compress.fatbin",
  };
  return Names;
}

inline const char *ExeSample = "fb_main_exe.bin";

inline std::vector<uint8_t> readBytes(const std::string &Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  REQUIRE_MESSAGE(bool(Buffer), "cannot read " << Path);
  llvm::StringRef S = (*Buffer)->getBuffer();
  return std::vector<uint8_t>(S.bytes_begin(), S.bytes_end());
}

inline std::string readText(const std::string &Path) {
  std::vector<uint8_t> Bytes = readBytes(Path);
  return std::string(Bytes.begin(), Bytes.end());
}

/// The value of E, failing the test with the error's message when it holds one.
template <typename T> T take(llvm::Expected<T> E) {
  if (!E) {
    std::string Msg = llvm::toString(E.takeError());
    FAIL("unexpected error: " << Msg);
  }
  return std::move(*E);
}

/// The message of E's error; fails the test when E holds a value.
template <typename T> std::string errorOf(llvm::Expected<T> E) {
  if (E) {
    FAIL_CHECK("expected an error");
    return "";
  }
  return llvm::toString(E.takeError());
}

} // namespace ptxforge::fatbin::test
