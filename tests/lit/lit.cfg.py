# lit configuration for Kiln's compiler tests.
#
# Tests are .mlir files (run through kiln-opt) and .onnxtxt files (ONNX text syntax,
# run through `kiln import`); error cases pipe `not kiln ...` into FileCheck.
import os

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "tests", "lit")

path = os.pathsep.join([config.kiln_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
config.substitutions.append(
    ("%python", (f"env LD_PRELOAD={config.python_preload} " if config.python_preload else "")
     + config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The mock CUDA driver (tests/unit/MockCudaDriver.cpp) for cuda end-to-end runs.
config.substitutions.append(("%mockcudalibs", os.path.join(config.kiln_lib_dir, "mock-cuda")))
config.substitutions.append(("%mockcuda", os.path.join(config.kiln_lib_dir,
                                                       "libkiln_mock_cuda.so")))
