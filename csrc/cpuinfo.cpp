// ampgrad._cpuinfo: which CPU capability this machine (CPU and OS) supports, asked before the engine
// module loads (Note [CPU dispatch] in CMakeLists.txt and python/ampgrad/_load_C.py). Plain C API and no
// -march: it must import on every x86-64 CPU, including those the engine's own builds would fault on.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace {

// torch's names (torch.backends.cpu.get_cpu_capability): "AVX512" needs what x86-64-v4 adds (AVX-512
// F/BW/CD/DQ/VL), "AVX2" what x86-64-v3 adds (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE). libgcc's
// __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 registers (XGETBV).
const char* machine_capability() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? "AVX512" : v3 ? "AVX2" : "DEFAULT";
#else
  return "DEFAULT";
#endif
}

PyObject* capability(PyObject*, PyObject*) { return PyUnicode_FromString(machine_capability()); }

PyMethodDef methods[] = {
    {"capability", capability, METH_NOARGS,
     "The best CPU capability this machine supports: 'AVX512', 'AVX2' or 'DEFAULT' (torch's names)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_cpuinfo", "CPU capability probe for ampgrad's engine modules.",
                          -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__cpuinfo() { return PyModule_Create(&module_def); }
