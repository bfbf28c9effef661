#!/usr/bin/env python3
"""Mutation testing for ampgrad: plants one small realistic bug at a time in a scratch copy of the
tree, rebuilds it incrementally (ccache: only the mutated file recompiles, and a mutant compiled
once is a cache hit the next time), runs the test suite fail-fast, and reports which mutants the
suite kills.

    python tools/mutate.py                      # every mutant
    python tools/mutate.py --only pow_grad_exponent0 --only abs_grad_at_zero
    python tools/mutate.py --list               # the mutants, nothing run
    python tools/mutate.py --tests-ref f0b0d22  # the mutants against another commit's tests/

A mutant is (name, file, original snippet, replacement, description). The snippet must occur in the
file exactly once: a snippet that is missing (the code moved on) or ambiguous is reported as an
ERROR and counts against the score, so the list cannot rot silently.

The scratch copy (--scratch, default /tmp/agmut) is rsynced from this working tree (tracked and
untracked-but-not-ignored files; never the build directories), configured once with the dev
build's flags except link-time optimization (-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF: with LTO
every relink re-optimizes the whole module, minutes per mutant; without it a mutant costs one
object and a plain link), and reverted after each mutant by restoring the original file. Python
mutants need no rebuild (the build step is then a ninja no-op).

Each mutant runs its `hint` test files first (fast kill), then, if they pass, the whole suite;
`-x` stops at the first failure. A mutant survives only when the whole suite passes. A run past
--timeout counts as killed (reported as TIMEOUT).
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SM = "kernels/common/scalar_math.h"
UNARY = "csrc/ops/unary.cpp"
BINARY = "csrc/ops/binary.cpp"
PROMOTION = "csrc/core/promotion.cpp"
RD = "csrc/ops/reduce.cpp"
KRD = "kernels/cpu/reduce.cpp"
AC = "csrc/amp/autocast.cpp"
ACPY = "python/ampgrad/amp/autocast_mode.py"
GS = "python/ampgrad/amp/grad_scaler.py"
KAMP = "kernels/cpu/amp.cpp"
KOPT = "kernels/cpu/optim.cpp"
NODE = "csrc/autograd/node.cpp"
ENG = "csrc/autograd/engine.cpp"


@dataclass
class Mutant:
    name: str
    file: str
    orig: str
    repl: str
    desc: str
    hint: tuple = ()  # test files that are likely to kill it (run first)


T_OPS = ("tests/test_ops.py",)
T_NUM = ("tests/test_numerics.py",)
T_AC = ("tests/test_autocast.py", "tests/test_autocast_nesting.py")
T_GS = ("tests/test_grad_scaler.py",)
T_OPT = ("tests/test_optim.py",)
T_AG = ("tests/test_autograd.py",)

MUTANTS = [
    # ---- per-element math (kernels/common/scalar_math.h)
    Mutant("expm1_as_exp_minus_1", SM, "AG_MATH_UNARY(Expm1, expm1(x))", "AG_MATH_UNARY(Expm1, exp(x) - T(1))",
           "expm1 computed as exp(x) - 1 (cancellation near 0)", T_NUM + T_OPS),
    Mutant("log1p_as_log_of_1_plus", SM, "AG_MATH_UNARY(Log1p, log1p(x))", "AG_MATH_UNARY(Log1p, log(T(1) + x))",
           "log1p computed as log(1 + x) (1 + x rounds away small x)", T_NUM + T_OPS),
    Mutant("relu_grad_at_zero", SM, "AG_MATH_BINARY(ReluBackward, T, b <= T(0) ? T(0) : a)",
           "AG_MATH_BINARY(ReluBackward, T, b < T(0) ? T(0) : a)",
           "relu backward passes the gradient at x == 0 (torch gives 0)", T_NUM + T_OPS),
    # ---- reductions (kernels/cpu/reduce.cpp)
    Mutant("sum_float_accumulator", KRD, "    using Acc = racc_t<scalar_t>;\n    reduce_generic<scalar_t, Acc>(in, out, r, [] { return Acc(0); }, [](Acc a, Acc v) { return math::wrap_add(a, v); }",
           "    using Acc = acc_t<scalar_t>;\n    reduce_generic<scalar_t, Acc>(in, out, r, [] { return Acc(0); }, [](Acc a, Acc v) { return math::wrap_add(a, v); }",
           "sum accumulates in the input's accumulate type (fp32 for fp32/fp16/bf16) instead of double", T_NUM + T_OPS),
    Mutant("mean_float_accumulator", KRD, "reduce_generic<scalar_t, double>(in, out, r, [] { return 0.0; }",
           "reduce_generic<scalar_t, float>(in, out, r, [] { return 0.0; }",
           "mean accumulates in float32", T_NUM + T_OPS),
    Mutant("max_ignores_later_nan", KRD, "if (v != v || (IsMax ? v > best : v < best)) { best = v; bi = k; }",
           "if (IsMax ? v > best : v < best) { best = v; bi = k; }", "max/min/argmax miss a NaN after the first element",
           T_OPS),
    Mutant("cumsum_float_accumulator", KRD, "std::is_same_v<scalar_t, float>, double,", "std::is_same_v<scalar_t, float>, float,",
           "cumsum/cumprod of fp32 accumulate in fp32 instead of double", T_NUM + T_OPS),
    # ---- backward formulas (csrc/ops/unary.cpp, binary.cpp, reduce.cpp)
    Mutant("pow_grad_exponent0", BINARY, "      ga = where(compare(Op::eq, e, wrap_scalar(0.0)), zeros_like(ga), ga);\n", "",
           "pow backward at exponent 0 not masked: 0 * 0^-1 = nan at x == 0", T_NUM + T_OPS),
    Mutant("pow_grad_zero_base", BINARY, "compare(Op::ge, e, wrap_scalar(0.0)));", "compare(Op::gt, e, wrap_scalar(0.0)));",
           "pow exponent-gradient at base 0 masked only for e > 0 (log(0) leaks at e == 0)", T_NUM + T_OPS),
    Mutant("sqrt_grad_epsilon", UNARY, 'AG_UNARY_GRAD(sqrt, true, "SqrtBackward0", OUT, g[0] / (x * 2.0))',
           'AG_UNARY_GRAD(sqrt, true, "SqrtBackward0", OUT, g[0] / (x * 2.0 + 1e-12))',
           "sqrt backward with a 'stabilizing' epsilon: finite instead of inf at 0", T_NUM + T_OPS),
    Mutant("softplus_grad_threshold", SM, "return z > T(threshold) ? a : a / (T(1) + exp(-z));",
           "return z >= T(threshold) ? a : a / (T(1) + exp(-z));",
           "softplus backward switches to the linear branch at beta * x == threshold (torch: only above)", T_NUM + T_OPS),
    Mutant("abs_grad_at_zero", UNARY, 'AG_UNARY_GRAD(abs, false, "AbsBackward0", IN, g[0] * sign(x))',
           'AG_UNARY_GRAD(abs, false, "AbsBackward0", IN, g[0] * x / abs(x))',
           "abs backward as x/|x|: nan at 0 (torch gives 0)", T_NUM + T_OPS),
    Mutant("clamp_grad_boundary", UNARY, "compare(Op::ge, v, wrap_scalar(s[0]))", "compare(Op::gt, v, wrap_scalar(s[0]))",
           "clamp backward drops the gradient at x == min (torch passes it)", T_NUM + T_OPS),
    Mutant("atan2_grad_sign", BINARY, "c.needs_input_grad(1) ? g[0] * -x * rr", "c.needs_input_grad(1) ? g[0] * x * rr",
           "atan2 backward wrt the second argument has the wrong sign", T_OPS),
    Mutant("norm_grad_zero_unmasked", RD, "if (p == 2) return {gg * where(y0, z, x / y)};",
           "if (p == 2) return {gg * (x / y)};", "p-norm backward of a zero vector: 0/0 = nan (torch gives 0)", T_NUM + T_OPS),
    Mutant("std_grad_zero_unmasked", RD,
           "Tensor gy = where(compare(Op::eq, y, wrap_scalar(0.0)), zeros_like(y), unsqueeze_dims(g[0], dims, nd, keepdim) / y);",
           "Tensor gy = unsqueeze_dims(g[0], dims, nd, keepdim) / y;",
           "std backward of a constant row: 0/0 = nan (torch gives 0)", T_NUM + T_OPS),
    Mutant("amax_grad_ties_not_split", RD, "return {unsqueeze_dims(g[0], dims, nd, keepdim) * mask / cnt};",
           "return {unsqueeze_dims(g[0], dims, nd, keepdim) * mask};",
           "amax/amin backward gives every tied element the full gradient", T_OPS),
    # ---- promotion (csrc/core/promotion.cpp)
    Mutant("promote_int_tensor_float_scalar", PROMOTION, "if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);",
           "if (higher == ScalarType::Bool) return promote_types(higher, lower);",
           "int tensor + float scalar stays integer", ("tests/test_promotion.py",) + T_OPS),
    # ---- the engine's gradient accumulation (csrc/autograd)
    Mutant("accumulate_grad_overwrites", NODE, "    binary_(Op::add, vg, grad);\n", "    vg = grad;\n",
           ".grad is overwritten instead of accumulated (no_grad path)", T_AG),
    Mutant("accumulate_grad_overwrites_create_graph", NODE, "    vg = add(vg, grad);\n", "    vg = grad;\n",
           ".grad overwritten when accumulating under create_graph=True", T_AG + T_NUM),
    Mutant("engine_buffer_overwrites", ENG, "    binary_(Op::add, slot, g);  // in place", "    slot = g;  // in place",
           "the engine's input buffer keeps the last gradient instead of the sum", T_AG),
    # ---- autocast and its cast cache (csrc/amp/autocast.cpp, python/ampgrad/amp/autocast_mode.py)
    Mutant("cast_cache_ignores_dtype", AC, " && it->second.cast.dtype() == dtype) return it->second.cast;",
           ") return it->second.cast;", "the cast cache returns a cast of another dtype (nested bf16/fp16 regions)", T_AC),
    Mutant("cast_cache_non_leaf", AC, "state().cache_enabled && t.is_leaf() && t.requires_grad()",
           "state().cache_enabled && t.requires_grad()", "non-leaf tensors are cached (stale casts)", T_AC),
    Mutant("cast_cache_under_no_grad", AC, "                   autograd::GradMode::is_enabled() && !autograd::InferenceMode::is_enabled();",
           "                   !autograd::InferenceMode::is_enabled();",
           "casts made under no_grad are cached and reused without history", T_AC),
    Mutant("cast_cache_not_cleared", ACPY, "            _C.clear_autocast_cache()\n", "            pass\n",
           "the cast cache is not cleared at the outermost exit", T_AC),
    Mutant("cast_cache_cleared_every_exit", ACPY, "        if _C.autocast_decrement_nesting() == 0:\n            _C.clear_autocast_cache()",
           "        _C.autocast_decrement_nesting()\n        _C.clear_autocast_cache()",
           "the cast cache is cleared on every exit, also of inner regions", T_AC),
    Mutant("autocast_restores_inner_dtype", ACPY, "_C._set_autocast_dtype(self.device, self.prev_fastdtype)",
           "_C._set_autocast_dtype(self.device, self.fast_dtype)",
           "leaving a nested region keeps the inner region's dtype", T_AC),
    Mutant("autocast_exit_disables", ACPY, "_C._set_autocast_enabled(self.device, self.prev)",
           "_C._set_autocast_enabled(self.device, False)", "leaving any region disables autocast (also an inner one)", T_AC),
    Mutant("autocast_cache_flag_not_restored", ACPY, "_C.set_autocast_cache_enabled(self.prev_cache_enabled)",
           "_C.set_autocast_cache_enabled(self._cache_enabled)", "cache_enabled of an inner region leaks out", T_AC),
    Mutant("autocast_promote_ignores_fp32", AC, "          if (t == ScalarType::Float32) widest = ScalarType::Float32;\n          else if",
           "          if (false) widest = ScalarType::Float32;\n          else if",
           "promote-policy ops (cat, addcmul, ...) cast fp32 args down instead of up", T_AC),
    # ---- GradScaler (python/ampgrad/amp/grad_scaler.py, kernels/cpu/amp.cpp)
    Mutant("scaler_growth_backoff_swapped", GS, "found_inf_combined, self._growth_factor,\n                                  self._backoff_factor,",
           "found_inf_combined, self._backoff_factor,\n                                  self._growth_factor,",
           "growth and backoff factors swapped in update()", T_GS),
    Mutant("scaler_found_inf_ignored", GS, "            optimizer.found_inf = found_inf\n", "            optimizer.found_inf = None\n",
           "step() does not pass found_inf to optimizers with amp scaling support", T_GS + T_OPT),
    Mutant("scaler_unscale_not_inverted", GS, "inv_scale = self._scale.double().reciprocal().float()",
           "inv_scale = self._scale.float()", "unscale_ multiplies by the scale instead of its inverse", T_GS),
    Mutant("unscale_misses_nan", KAMP, "          for (int64_t i = 0; i < n; ++i) {\n            const A v = static_cast<A>(q[i]);\n            bad |= !(std::abs(v) <= std::numeric_limits<A>::max());",
           "          for (int64_t i = 0; i < n; ++i) {\n            const A v = static_cast<A>(q[i]);\n            bad |= std::abs(v) > std::numeric_limits<A>::max();",
           "the non-finite check of contiguous grads sees inf but not nan", T_GS + T_NUM),
    Mutant("scaler_tracker_not_reset_on_inf", KAMP, "    s = static_cast<float>(static_cast<double>(s) * backoff);  // torch multiplies in double, rounds once\n    t = 0;\n",
           "    s = static_cast<float>(static_cast<double>(s) * backoff);  // torch multiplies in double, rounds once\n",
           "the growth tracker keeps counting across a skipped step", T_GS),
    Mutant("scaler_grows_one_early", KAMP, "if (successful == interval)", "if (successful >= interval - 1)",
           "the scale grows after interval - 1 clean steps", T_GS),
    # ---- optimizers (kernels/cpu/optim.cpp)
    Mutant("adam_bias_correction_off_by_one", KOPT, "    const double step = step_ref;\n", "    const double step = step_ref + 1;\n",
           "Adam's bias corrections use step + 1", T_OPT),
    Mutant("adam_weight_decay_sign", KOPT, "if constexpr (Decay == 1) gi = gi + wd * pi;", "if constexpr (Decay == 1) gi = gi - wd * pi;",
           "Adam's L2 weight decay has the wrong sign", T_OPT),
    Mutant("adamw_decay_without_lr", KOPT, "a.weight_decay, 1 - a.lr * a.weight_decay,", "a.weight_decay, 1 - a.weight_decay,",
           "AdamW's decoupled decay is not scaled by lr", T_OPT),
    Mutant("sgd_weight_decay_sign", KOPT, "if constexpr (Decay) gi = gi + wd * static_cast<A>(p[i]);",
           "if constexpr (Decay) gi = gi - wd * static_cast<A>(p[i]);", "SGD's weight decay has the wrong sign", T_OPT),
    Mutant("adam_amsgrad_noop", KOPT, "vd = std::max(static_cast<A>(vmax[i]), vi);", "vd = vi;",
           "amsgrad keeps no running max", T_OPT),
    Mutant("optim_found_inf_ignored", KOPT, "bool skip_step(const Tensor* found_inf) { return found_inf && *found_inf->data<float>() != 0.0f; }",
           "bool skip_step(const Tensor* found_inf) { return false; }", "fused steps ignore found_inf", T_OPT + T_GS),
]


def sh(cmd, cwd, timeout=None, env=None, log=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           env=env, text=True)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = None, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    if log:
        with open(log, "a") as f:
            f.write(f"$ {cmd}\n{out}\n[rc={rc}, {time.time() - t0:.1f}s]\n")
    return rc, out


def sync_scratch(scratch, tests_ref):
    os.makedirs(scratch, exist_ok=True)
    files = subprocess.run("git ls-files -co --exclude-standard -z", cwd=ROOT, shell=True, check=True,
                           stdout=subprocess.PIPE).stdout.split(b"\0")
    files = [f.decode() for f in files if f and os.path.exists(os.path.join(ROOT, f.decode()))]
    # a file whose content did not change keeps its mtime, so ninja does not rebuild it
    for f in files:
        src, dst = os.path.join(ROOT, f), os.path.join(scratch, f)
        if os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    if tests_ref:
        shutil.rmtree(os.path.join(scratch, "tests"))
        subprocess.run(f"git archive {tests_ref} tests | tar -x -C {scratch}", cwd=ROOT, shell=True, check=True)


def build_env():
    env = dict(os.environ)
    env["CCACHE_BASEDIR"] = "/"
    env["PYTHONPATH"] = "python"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def build(scratch, env, log):
    bdir = os.path.join(scratch, "build", "mut")
    if not os.path.exists(os.path.join(bdir, "build.ninja")):
        rc, out = sh("cmake -S . -B build/mut -G Ninja -DAMPGRAD_CUDA=OFF -DAMPGRAD_CPU=native -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "
                     "-DCMAKE_BUILD_TYPE=Release -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF", scratch, env=env, log=log)
        if rc != 0:
            return rc, out
    return sh(f"cmake --build build/mut -j{os.environ.get('MUTATE_JOBS', '2')}", scratch, env=env, log=log)


def run_tests(scratch, env, hint, timeout, log, tests="tests"):
    """0: all pass; 1: a test failed; None: timeout. `tests`: the test directory to run."""
    deadline = time.time() + timeout
    base = "python -m pytest -x -q -p no:cacheprovider -o addopts='' "
    hint = [tests + h[len("tests"):] for h in hint]
    hint = [h for h in hint if os.path.exists(os.path.join(scratch, h))]
    if hint:
        rc, out = sh(base + " ".join(hint), scratch, timeout=max(1, deadline - time.time()), env=env, log=log)
        if rc is None:
            return None, out
        if rc != 0 and rc != 5:
            return 1, out
    rc, out = sh(base + tests + " " + " ".join(f"--deselect {h}" for h in hint), scratch,
                 timeout=max(1, deadline - time.time()), env=env, log=log)
    if rc is None:
        return None, out
    return (0 if rc == 0 else 1), out


def last_failure(out):
    lines = [l for l in out.splitlines() if l.startswith(("FAILED", "ERROR"))]
    return lines[0][:160] if lines else out.strip().splitlines()[-1][:160] if out.strip() else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="run only this mutant (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and check their snippets")
    ap.add_argument("--scratch", default="/tmp/agmut", help="scratch copy (default /tmp/agmut)")
    ap.add_argument("--tests-ref", help="use tests/ of this git commit instead of the working tree's")
    ap.add_argument("--before-ref", help="also run each mutant against tests/ of this commit (the 'before' score); "
                                         "one build serves both suites")
    ap.add_argument("--reverse", action="store_true", help="run the mutants in reverse order")
    ap.add_argument("--shard", default="0/1", help="i/n: run every n-th mutant starting at i (parallel scratch copies)")
    ap.add_argument("--timeout", type=int, default=900, help="per-mutant test timeout in seconds")
    ap.add_argument("--skip-baseline", action="store_true", help="do not check that the unmutated tree passes")
    ap.add_argument("--log", default=None, help="full build/test output (default <scratch>/mutate.log)")
    args = ap.parse_args()

    si, sn = map(int, args.shard.split("/"))
    names = [m.name for m in MUTANTS]
    assert len(set(names)) == len(names), "duplicate mutant names"
    todo = MUTANTS
    if args.only:
        unknown = set(args.only) - set(names)
        if unknown:
            sys.exit(f"unknown mutant(s): {', '.join(sorted(unknown))}")
        todo = [m for m in MUTANTS if m.name in args.only]
    todo = todo[si::sn]
    if args.reverse:
        todo = todo[::-1]

    def check(m, root):
        path = os.path.join(root, m.file)
        if not os.path.exists(path):
            return "file not found"
        n = open(path).read().count(m.orig)
        return None if n == 1 else ("snippet not found" if n == 0 else f"snippet occurs {n} times")

    if args.list:
        for m in todo:
            err = check(m, ROOT)
            print(f"{m.name:40s} {m.file:36s} {'ERROR: ' + err if err else 'ok':20s} {m.desc}")
        return 0

    scratch = os.path.abspath(args.scratch)
    log = args.log or os.path.join(scratch, "mutate.log")
    sync_scratch(scratch, args.tests_ref)
    if args.before_ref:
        tb = os.path.join(scratch, "tests_before")
        shutil.rmtree(tb, ignore_errors=True)
        os.makedirs(tb)
        subprocess.run(f"git archive {args.before_ref} tests | tar -x --strip-components=1 -C {tb}", cwd=ROOT, shell=True,
                       check=True)
    open(log, "w").close()
    env = build_env()
    rc, out = build(scratch, env, log)
    if rc != 0:
        sys.exit(f"the unmutated scratch tree does not build (see {log})")
    if not args.skip_baseline:
        t0 = time.time()
        for tdir in ["tests"] + (["tests_before"] if args.before_ref else []):
            rc, out = run_tests(scratch, env, (), args.timeout, log, tdir)
            if rc != 0:
                sys.exit(f"the unmutated tree fails {tdir}: {last_failure(out)} (see {log})")
            print(f"baseline: {tdir} passes ({time.time() - t0:.0f}s)", flush=True)

    results = []
    for m in todo:
        t0 = time.time()
        err = check(m, scratch)
        if err:
            results.append((m, "ERROR", err, 0.0, "ERROR"))
            print(f"ERROR    {m.name}: {err}", flush=True)
            continue
        path = os.path.join(scratch, m.file)
        orig_text = open(path).read()
        try:
            with open(path, "w") as f:
                f.write(orig_text.replace(m.orig, m.repl, 1))
            rc, out = build(scratch, env, log)
            before = ""
            if rc != 0:
                status, detail = "ERROR", "mutant does not compile: " + last_failure(out)
                before = "ERROR"
            else:
                if args.before_ref:
                    rcb, outb = run_tests(scratch, env, m.hint, args.timeout, log, "tests_before")
                    before = {0: "SURVIVED", 1: "KILLED", None: "TIMEOUT"}[rcb]
                rc, out = run_tests(scratch, env, m.hint, args.timeout, log)
                status = {0: "SURVIVED", 1: "KILLED", None: "TIMEOUT"}[rc]
                detail = "" if rc == 0 else last_failure(out) if rc == 1 else f"tests ran past {args.timeout}s"
        finally:
            with open(path, "w") as f:
                f.write(orig_text)
        dt = time.time() - t0
        results.append((m, status, detail, dt, before))
        print(f"{status:8s} {m.name} ({dt:.0f}s){' [before: ' + before + ']' if before else ''} {detail}", flush=True)
    build(scratch, env, log)  # leave the scratch build unmutated

    def score(col):
        k = sum(1 for r in results if r[col] in ("KILLED", "TIMEOUT"))
        surv = ", ".join(r[0].name for r in results if r[col] == "SURVIVED") or "none"
        errs = ", ".join(r[0].name for r in results if r[col] == "ERROR") or "none"
        return f"{k}/{len(results)} killed = {100.0 * k / max(1, len(results)):.1f}% (survived: {surv}; errors: {errs})"

    print("\n| mutant | file | " + ("before | " if args.before_ref else "") + "result | description |")
    print("|---|---|" + ("---|" if args.before_ref else "") + "---|---|")
    for m, s, d, dt, b in results:
        print(f"| {m.name} | {m.file} | " + (f"{b} | " if args.before_ref else "") + f"{s} | {m.desc} |")
    if args.before_ref:
        print(f"\nscore before ({args.before_ref} tests): {score(4)}")
    print(f"score: {score(1)}")
    return 0 if all(r[1] != "ERROR" for r in results) else 2


if __name__ == "__main__":
    sys.exit(main())
