// The autocast gate (Note [Autocast gate]) for C++ callables: gated<Op::x>(f) is `f` for an op
// without a policy, and otherwise `f` behind the gate: its tensor arguments are cast per the op
// row's policy, then it runs with autocast excluded. bindings/gate.h extends the argument walk to
// Python objects; ops that torch decomposes (inner) call their parts through gated<> so that the
// parts are autocast as torch's would be.
#pragma once
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>
#include "amp/autocast.h"

namespace ampgrad::amp {

// The candidates of one call, gathered for apply(): every defined tensor argument, and each
// optional dtype (set to float32 by fp32_set_opt_dtype / fp32_append_dtype rows when unset).
struct GateArgs {
  std::vector<Tensor*> ts;
  std::vector<std::optional<ScalarType>*> dtypes;
  void add(Tensor& t) { if (t.defined()) ts.push_back(&t); }
  void add(std::optional<Tensor>& t) { if (t && t->defined()) ts.push_back(&*t); }
  void add(std::vector<Tensor>& v) { for (auto& t : v) add(t); }
  void add(std::vector<std::optional<Tensor>>& v) { for (auto& t : v) add(t); }
  void add(std::optional<ScalarType>& d) { dtypes.push_back(&d); }
  template <typename T> void add(T&) {}
  void cast(Op op) {
    apply(op, ts.data(), ts.size());
    if (!ts.empty())
      for (auto* d : dtypes)
        if (!*d) *d = set_opt_dtype(op, *ts.front(), std::nullopt);
  }
};

namespace detail {
template <Op op, typename Walk, typename F, typename R, typename C, typename... A>
auto wrap(F f, R (C::*)(A...) const) {
  return [f](A... a) -> R {
    if (!gate_open()) return f(std::forward<A>(a)...);
    std::tuple<std::decay_t<A>...> args(a...);
    Walk w;
    std::apply([&](auto&... x) { (w.add(x), ...); }, args);
    w.cast(op);
    ExcludeGuard excluded(op);
    return std::apply(f, args);
  };
}
}  // namespace detail

template <Op op, typename Walk = GateArgs, typename F>
auto gated(F f) {
  if constexpr (!has_autocast_policy(op)) return f;
  else return detail::wrap<op, Walk>(std::move(f), &F::operator());
}

}  // namespace ampgrad::amp
