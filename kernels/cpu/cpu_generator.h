// CPU generator objects (ampgrad.Generator): torch's mt19937 stream per object, its state in
// torch's 5056-byte CPUGeneratorImplState layout; see Note [Generator objects] in random.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace ampgrad {
struct CpuGenerator;
std::shared_ptr<CpuGenerator> cpu_generator_new();
CpuGenerator* cpu_generator_default();
// Makes `g` (nullptr: the default) the calling thread's generator; returns the previous one.
CpuGenerator* cpu_generator_set_current(CpuGenerator* g);
void cpu_generator_manual_seed(CpuGenerator* g, uint64_t seed);
uint64_t cpu_generator_initial_seed(CpuGenerator* g);
std::string cpu_generator_get_state(CpuGenerator* g);
void cpu_generator_set_state(CpuGenerator* g, const std::string& bytes);
}  // namespace ampgrad
