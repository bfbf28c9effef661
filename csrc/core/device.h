// Devices: "cpu", "cuda", "cuda:N".
#pragma once
#include <string>
#include "core/check.h"

namespace ampgrad {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: "the current device" (cuda) / none (cpu)
  Device() = default;
  Device(DeviceType t, int idx = -1) : type(t), index(static_cast<int8_t>(idx)) {}
  explicit Device(const std::string& s) {
    std::string kind = s, idx;
    auto colon = s.find(':');
    if (colon != std::string::npos) { kind = s.substr(0, colon); idx = s.substr(colon + 1); }
    if (kind == "cpu") type = DeviceType::CPU;
    else if (kind == "cuda") type = DeviceType::CUDA;
    else AG_THROW(RuntimeError, "Expected one of cpu, cuda device type at start of device string: ", s);
    if (!idx.empty()) {
      for (char c : idx) AG_CHECK(c >= '0' && c <= '9', "Invalid device string: '", s, "'");
      index = static_cast<int8_t>(std::stoi(idx));
    }
  }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && (type == DeviceType::CPU || norm() == o.norm()); }
  bool operator!=(const Device& o) const { return !(*this == o); }
  int norm() const { return index < 0 ? 0 : index; }
  std::string type_str() const { return type == DeviceType::CPU ? "cpu" : "cuda"; }
  std::string str() const { return index >= 0 ? type_str() + ":" + std::to_string(index) : type_str(); }
};

}  // namespace ampgrad
