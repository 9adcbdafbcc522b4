// The driver tests' shared context: one context of device 0 per test process, made on first use.
#pragma once

#include "ptxforge/driver/Context.h"
#include "ptxforge/driver/Driver.h"

#include <doctest/doctest.h>

namespace ptxforge::testing {

inline driver::Context &testContext() {
  static driver::Context *C = [] {
    REQUIRE(driver::takeStatus(driver::Driver::get().initialize()) == driver::Status::Success);
    auto Ctx = driver::Driver::get().createContext(0, 0);
    REQUIRE(static_cast<bool>(Ctx));
    return *Ctx;
  }();
  return *C;
}

} // namespace ptxforge::testing
