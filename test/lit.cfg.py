# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "CMakeLists.txt",
                   "MemoryPlanTest.cpp", "PeaksTest.cpp", "RuntimeTest.cpp"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
config.substitutions.append(("%PYTHON", config.python_executable))
config.substitutions.append(("%kiln_src", config.kiln_src_root))
config.substitutions.append(("%kiln_obj", config.kiln_obj_root))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
llvm_config.add_tool_substitutions([ToolSubst(t, unresolved="fatal") for t in
                                    ("kiln-opt", "kiln-compile", "kiln-run")],
                                   [config.kiln_tools_dir])

# Python packages the generators need.
def have_module(name):
    return subprocess.run([config.python_executable, "-c", "import " + name],
                          capture_output=True).returncode == 0

if have_module("onnx"):
    config.available_features.add("onnx-python")
if have_module("onnxruntime"):
    config.available_features.add("onnxruntime")
# libFuzzer (Debian's clang-22 and libclang-rt-22-dev) builds fuzz/.
if os.access("/usr/lib/llvm-22/bin/clang++", os.X_OK) and os.path.exists(
        "/usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.fuzzer-x86_64.a"):
    config.available_features.add("libfuzzer")
# The Python package (python/) builds with these and tests with pytest.
if all(have_module(m) for m in ("nanobind", "scikit_build_core", "pytest")):
    config.available_features.add("python-package")
# 256-bit vpdpbusd runs here: AVX-VNNI, or AVX-512 VNNI with VL.
try:
    with open("/proc/cpuinfo") as f:
        flags = next((l.split(":", 1)[1].split() for l in f
                      if l.startswith("flags")), [])
except OSError:
    flags = []
if "avx_vnni" in flags or ("avx512_vnni" in flags and "avx512vl" in flags):
    config.available_features.add("cpu-vnni256")
# x86-64-v3 (AVX2, FMA) code runs here.
if all(f in flags for f in ("avx2", "fma", "bmi2")):
    config.available_features.add("cpu-avx2")
# x86-64-v4 (skylake-avx512) code runs here.
if all(f in flags for f in ("avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl")):
    config.available_features.add("cpu-avx512")
# AVX-512 BF16's vdpbf16ps runs here.
if "avx512_bf16" in flags:
    config.available_features.add("cpu-avx512bf16")
# The 2:4 int8 kernels run here: AVX-512 VBMI2's vpexpandb and AVX-512
# VNNI's vpdpbusd.
if all(f in flags for f in ("avx512_vbmi2", "avx512_vnni", "avx512bw")):
    config.available_features.add("cpu-vbmi2-vnni")
# AMX's 8-bit tile multiply runs here (the runtime asks Linux for the tile
# state, which a kernel before 5.16 cannot give: then the modules refuse to
# load and these tests fail, as they should).
if all(f in flags for f in ("amx_tile", "amx_int8", "avx512_vnni")):
    config.available_features.add("cpu-amx")
# AMX's bf16 tile multiply runs here (the same tile state).
if all(f in flags for f in ("amx_tile", "amx_bf16")):
    config.available_features.add("cpu-amx-bf16")
if os.path.exists(os.path.join(config.kiln_tools_dir, "KilnUnitTests")):
    config.available_features.add("gtest")
if os.path.isdir(os.path.join(config.onnx_testdata_dir, "node")):
    config.available_features.add("onnx-testdata")

# The CUDA path: ptxas assembles kernels (no GPU needed); a GPU runs them.
def find_ptxas():
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.access(os.path.join(home, "bin", "ptxas"), os.X_OK):
            return os.path.join(home, "bin", "ptxas")
    return shutil.which("ptxas")

if find_ptxas():
    config.available_features.add("ptxas")
if shutil.which("nvidia-smi") and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0:
    config.available_features.add("cuda")
for var in ("CUDA_HOME", "KILN_CUDA_DEVICE", "KILN_CUDA_GRAPHS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# The GPU's architecture for test/gpu (sm_90 on an H100), from nvidia-smi.
gpu_chip = "sm_90"
if "cuda" in config.available_features:
    cc = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                        capture_output=True, text=True).stdout.split()
    if cc and cc[0].replace(".", "").isdigit():
        gpu_chip = "sm_" + cc[0].replace(".", "")
        if gpu_chip not in ("sm_80", "sm_86", "sm_89", "sm_90"):
            gpu_chip = "sm_90" if int(cc[0].split(".")[0]) >= 9 else "sm_80"
config.substitutions.append(("%gpu_chip", gpu_chip))
