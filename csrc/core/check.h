// Error reporting: AG_CHECK(cond, "[op] message ", args...) throws; the exception type picks the
// Python exception the bindings raise (see bindings/module.cpp).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ampgrad {

struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };
using RuntimeError = std::runtime_error;

namespace detail {
template <typename... Args> std::string str_cat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}
}  // namespace detail

#define AG_THROW(Kind, ...) throw ::ampgrad::Kind(::ampgrad::detail::str_cat(__VA_ARGS__))
#define AG_CHECK(cond, ...) do { if (!(cond)) AG_THROW(RuntimeError, __VA_ARGS__); } while (0)
#define AG_CHECK_VALUE(cond, ...) do { if (!(cond)) AG_THROW(ValueError, __VA_ARGS__); } while (0)
#define AG_CHECK_INDEX(cond, ...) do { if (!(cond)) AG_THROW(IndexError, __VA_ARGS__); } while (0)
#define AG_CHECK_TYPE(cond, ...) do { if (!(cond)) AG_THROW(TypeError, __VA_ARGS__); } while (0)
// torch raises NotImplementedError for a kernel missing for a dtype ("... not implemented for 'Long'").
#define AG_CHECK_NOT_IMPL(cond, ...) do { if (!(cond)) AG_THROW(NotImplementedError, __VA_ARGS__); } while (0)

}  // namespace ampgrad
