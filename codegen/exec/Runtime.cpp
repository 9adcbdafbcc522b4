// The helper table JIT'd code links against, assembled from each helper family.
#include "Runtime.h"
#include "MatrixCompute.h"
#include "Memcheck.h"
#include "Profile.h"

using namespace ptxforge::codegen::exec;

const std::vector<std::pair<std::string, void *>> &ptxforge::codegen::exec::runtimeHelpers() {
  static const HelperTable Table = [] {
    HelperTable T;
    registerSyncHelpers(T);
    registerMathHelpers(T);
    registerMiscHelpers(T);
    registerDeviceLibrary(T);
    registerDeviceRuntime(T);
    registerIntegerHelpers(T);
    registerTextureHelpers(T);
    registerMemcheckHelpers(T);
    registerTensorMapHelpers(T);
    registerWarpgroupHelpers(T);
    registerSparseMatrixHelpers(T);
    registerScaledMatrixHelpers(T);
    registerClusterHelpers(T);
    registerProfileHelpers(T);
    return T;
  }();
  return Table;
}
