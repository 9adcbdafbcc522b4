# lit configuration for ptxforge's file tests: `ptxforge`, `ptxforge-opt` (passes/*.ll) and FileCheck on PATH,
# %shared for ../shared; the features `ptxas` and `cuobjdump` where NVIDIA's tools are installed.
import os
import shutil
import lit.formats

config.name = "ptxforge"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".ptx", ".test", ".ll"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ptxforge_obj_root, "tests", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.ptxforge_bin, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%shared", config.shared_dir))
config.substitutions.append(("%src", config.ptxforge_src_root))
config.substitutions.append(("%obj", config.ptxforge_obj_root))
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
    config.environment["PATH"] += os.pathsep + os.path.dirname(shutil.which("ptxas"))
if shutil.which("cuobjdump"):
    config.available_features.add("cuobjdump")
    config.environment["PATH"] += os.pathsep + os.path.dirname(shutil.which("cuobjdump"))
