"""Loads the engine module ampgrad._C built for the best CPU capability this machine has.

Note [CPU dispatch]: a default build (pip install / pip wheel; CMakeLists.txt) compiles the engine three
times: `_C` for any x86-64 CPU ("DEFAULT"), `_C-avx2` for x86-64-v3 ("AVX2") and `_C-avx512` for x86-64-v4
("AVX512"). `_cpuinfo` says what the CPU and the OS support; the best module present that does not exceed
it is loaded under the name `ampgrad._C` (its init function is PyInit__C whatever the file is called), so
the rest of the package imports `_C` as usual. `AMPGRAD_CPU_CAPABILITY=default|avx2|avx512` asks for a
lower capability, as `ATEN_CPU_CAPABILITY` does for torch (a higher one than the machine's is capped).
A one-module build (AMPGRAD_CPU=native or one -march value) has only `_C`, which is imported directly.
"""
import importlib.machinery
import importlib.util
import os
import sys
import warnings

from . import _cpuinfo  # the probe: built without -march, so it loads on every x86-64 CPU

_ORDER = ("DEFAULT", "AVX2", "AVX512")
_FILES = {"DEFAULT": "_C", "AVX2": "_C-avx2", "AVX512": "_C-avx512"}


def _requested(machine):
    env = os.environ.get("AMPGRAD_CPU_CAPABILITY", "").strip()
    if not env:
        return machine
    want = env.upper()
    if want not in _ORDER:
        warnings.warn(f"AMPGRAD_CPU_CAPABILITY={env!r} is not one of default, avx2, avx512; using {machine.lower()}",
                      RuntimeWarning, stacklevel=3)
        return machine
    return _ORDER[min(_ORDER.index(want), _ORDER.index(machine))]


def load(package_name, package_dir):
    """Puts the engine module in sys.modules[package_name + '._C'] (the best variant present) and returns it."""
    name = package_name + "._C"
    if name in sys.modules:
        return sys.modules[name]
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    variants = {cap: path for cap, stem in _FILES.items() if cap != "DEFAULT"
                for path in [os.path.join(package_dir, stem + sfx) for sfx in suffixes] if os.path.isfile(path)}
    if variants:
        want = _requested(_cpuinfo.capability())
        for cap in reversed(_ORDER[1:_ORDER.index(want) + 1]):
            if cap in variants:
                loader = importlib.machinery.ExtensionFileLoader(name, variants[cap])
                spec = importlib.util.spec_from_file_location(name, variants[cap], loader=loader)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
                return module
    return importlib.import_module(name)  # the DEFAULT build, or the only one
