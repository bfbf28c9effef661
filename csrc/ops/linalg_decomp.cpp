// torch.linalg's decompositions and solvers. Each front end checks shapes and dtypes as torch does,
// folds the batch dims into one [batch, m, n] call of the linalg kernel (Note [Linalg kernels]) and
// records torch's backward node; the backward formulas are torch's (FunctionsManual.cpp) written with
// ampgrad's own differentiable ops, so create_graph and double backward work.
#include "ops/linalg_decomp.h"
#include <cmath>
#include <limits>
#include "kernels/linalg_args.h"
#include "ops/internal.h"

namespace ampgrad {

namespace {
using Mode = LinalgArgs::Mode;

Tensor mH(const Tensor& t) { return transpose(t, -2, -1); }
int64_t rows(const Tensor& t) { return t.sizes()[t.dim() - 2]; }
int64_t cols(const Tensor& t) { return t.sizes()[t.dim() - 1]; }
Shape batch_of(const Tensor& t, int64_t trailing = 2) { return Shape(t.sizes().begin(), t.sizes().end() - trailing); }
Shape with(Shape s, std::initializer_list<int64_t> tail) { s.insert(s.end(), tail); return s; }
Tensor eye_of(int64_t n, const Tensor& like) { return eye(n, n, like.dtype(), like.device()); }
// v [..., n] -> diagonal matrices [..., n, n]
Tensor diag_embed(const Tensor& v) {
  const int64_t n = v.sizes().back();
  Tensor d = eye(n, n, v.dtype(), v.device());
  return unsqueeze(v, -1) * d;
}
Tensor diag_part(const Tensor& A) { return diagonal(A, 0, -2, -1); }
Tensor add_opt(const Tensor& a, const Tensor& b) { return !a.defined() ? b : !b.defined() ? a : a + b; }

void check_matrix(const Tensor& A, const char* name, const char* lowp_kernel) {
  AG_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  const ScalarType dt = A.dtype();
  AG_CHECK(is_floating(dt), name, ": Expected a floating point or complex tensor as input. Got ", scalar_type_name(dt));
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16) {
    if (!lowp_kernel) AG_THROW(RuntimeError, name, ": Low precision dtypes not supported. Got ", scalar_type_name(dt));
    AG_THROW(NotImplementedError, "\"", lowp_kernel, "\" not implemented for '", scalar_type_name(dt), "'");
  }
}
void check_square(const Tensor& A, const char* name) {
  AG_CHECK(rows(A) == cols(A), name, ": A must be batches of square matrices, but they are ", rows(A), " by ", cols(A), " matrices");
}

// The input as a contiguous [batch, m, n] tensor, no history.
Tensor flat3(const Tensor& A) {
  autograd::AutoGradMode off(false);
  const int64_t b = shape_numel(batch_of(A));
  Tensor r = reshape(detach(A), {b, rows(A), cols(A)});
  return r.is_contiguous() ? r : contiguous(r);
}

void run_kernel(Mode mode, Tensor* in, Tensor* out, LinalgArgs a) {
  a.mode = mode;
  if (a.batch == 0) return;
  kernel<LinalgKernel>(Op::linalg_decomp, in[0].device())(in, out, a);
}

// Raises LinAlgError for the first failed matrix (info > 0), with torch's "(Batch element i): " prefix
// for batched inputs.
template <typename Msg>
void check_info(const Tensor& info, bool batched, const char* name, Msg msg) {
  const int32_t* p = info.data<int32_t>();
  for (int64_t b = 0; b < info.numel(); ++b) {
    if (p[b] <= 0) continue;
    std::string pre = std::string(name) + ": ";
    if (batched) pre += "(Batch element " + std::to_string(b) + "): ";
    throw LinAlgError(pre + msg(p[b]));
  }
}

// ---- raw kernels (no history) over a [batch..., m, n] input
struct Lu { Tensor LU, piv, info; };
Lu raw_lu(const Tensor& A) {
  Tensor x = flat3(A);
  const int64_t B = x.sizes()[0], m = x.sizes()[1], n = x.sizes()[2], k = std::min(m, n);
  Tensor in[1] = {x};
  Tensor out[3] = {empty(x.sizes(), x.dtype(), x.device()), empty({B, k}, ScalarType::Int32, x.device()),
                   full({B}, Scalar(int64_t(0)), ScalarType::Int32, x.device())};
  LinalgArgs a; a.batch = B; a.m = m; a.n = n;
  run_kernel(LinalgArgs::kLuFactor, in, out, a);
  const Shape bs = batch_of(A);
  return {reshape(out[0], with(bs, {m, n})), reshape(out[1], with(bs, {k})), reshape(out[2], bs)};
}

// LU [..., n, n] and B [..., n, k] with the same batch dims.
Tensor raw_lu_solve(const Tensor& LU, const Tensor& piv, const Tensor& B, bool adjoint) {
  Tensor lu = flat3(LU), b = flat3(B);
  Tensor p;
  {
    autograd::AutoGradMode off(false);
    p = contiguous(reshape(detach(piv), {lu.sizes()[0], rows(LU)}));
  }
  Tensor in[3] = {lu, p, b};
  Tensor out[1] = {empty(b.sizes(), b.dtype(), b.device())};
  LinalgArgs a; a.batch = lu.sizes()[0]; a.n = rows(LU); a.m = a.n; a.k = cols(B); a.adjoint = adjoint;
  if (a.n > 0 && a.k > 0) run_kernel(LinalgArgs::kLuSolve, in, out, a);
  return reshape(out[0], B.sizes());
}

Tensor raw_tri_solve(const Tensor& A, const Tensor& B, bool upper, bool unit) {
  Tensor x = flat3(A), b = flat3(B);
  Tensor in[2] = {x, b};
  Tensor out[1] = {empty(b.sizes(), b.dtype(), b.device())};
  LinalgArgs a; a.batch = x.sizes()[0]; a.n = rows(A); a.m = a.n; a.k = cols(B); a.upper = upper; a.unit = unit;
  if (a.n > 0 && a.k > 0) run_kernel(LinalgArgs::kTriSolve, in, out, a);
  return reshape(out[0], B.sizes());
}

// Broadcasts the batch dims of A [..., n, n] and B [..., r, c].
std::pair<Tensor, Tensor> broadcast_batch(const Tensor& A, const Tensor& B) {
  Shape bs = broadcast_shapes(batch_of(A), batch_of(B));
  return {expand(A, with(bs, {rows(A), cols(A)})), expand(B, with(bs, {rows(B), cols(B)}))};
}

int lu_parity(const Tensor& piv, int64_t b, int64_t k) {
  const int32_t* p = piv.data<int32_t>() + b * k;
  int s = 1;
  for (int64_t i = 0; i < k; ++i) if (p[i] != i + 1) s = -s;
  return s;
}

// sign(det P) per matrix, as a tensor of A's dtype shaped as the batch.
Tensor perm_sign(const Tensor& piv, const Shape& bs, const Tensor& like) {
  Tensor pc = contiguous(piv);
  const int64_t k = pc.dim() ? pc.sizes().back() : 0;
  const int64_t B = shape_numel(bs);
  Tensor s = empty({B}, ScalarType::Float64, like.device());
  double* sd = s.data<double>();
  for (int64_t b = 0; b < B; ++b) sd[b] = lu_parity(pc, b, k);
  return to_dtype(reshape(s, bs), like.dtype());
}

// Exclusive products: out_i = prod_{j != i} s_j along the last dim (torch's prod_safe_zeros_backward).
Tensor prod_others(const Tensor& S) {
  const int64_t k = S.sizes().back();
  if (k == 0) return S;
  Tensor one = ones_like(narrow(S, -1, 0, 1));
  Tensor pre = cat({one, cumprod(narrow(S, -1, 0, k - 1), -1, std::nullopt)}, -1);
  Tensor suf = flip(cat({one, cumprod(flip(narrow(S, -1, 1, k - 1), {-1}), -1, std::nullopt)}, -1), {-1});
  return pre * suf;
}

// ---- backward formulas (torch's FunctionsManual.cpp)
Tensor det_backward(const Tensor& g, const Tensor& det, const Tensor& A) {
  if (!g.defined()) return Tensor();
  if (A.numel() == 0) return zeros_like(A);
  const double eps = A.dtype() == ScalarType::Float64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  Tensor d = diag_embed(unsqueeze(g * det, -1) * ones_like(diag_part(A)));
  auto nonsingular = [&](const Tensor& M) { return linalg_solve(mH(M), d, true); };
  // The cofactor matrix through the SVD: finite and differentiable again at singular matrices.
  auto singular = [&](const Tensor& M) {
    auto [U, S, Vh] = linalg_svd(M, false, true);
    Tensor alpha = linalg_det(U) * linalg_det(Vh) * g;
    Tensor D = prod_others(S) * unsqueeze(alpha, -1);
    return matmul(U * unsqueeze(D, -2), Vh);
  };
  // With create_graph torch takes the SVD formula for nearly singular matrices (|det| < 100 eps).
  // Without it torch solves with A^H, so an exactly singular matrix gets whatever its LAPACK's
  // rounding gives: torch 2.13 on an Intel CPU returned the cofactor matrix for a rank-2 3x3 input
  // but zeros for [[1, 2], [2, 4]] (whose cofactor matrix is [[4, -2], [-2, 1]]), and zeros for both
  // on an AMD CPU. ampgrad gives the exact derivative, the cofactor matrix, by the SVD formula
  // wherever det is exactly 0.
  Tensor is_sing;
  {
    autograd::AutoGradMode off(false);
    is_sing = autograd::GradMode::is_enabled() ? compare(Op::lt, abs(detach(det)), wrap_scalar(100.0 * eps))
                                               : compare(Op::eq, detach(det), wrap_scalar(0.0));
  }
  const bool any_s = item_double(any(is_sing, std::nullopt, false)) != 0;
  if (!any_s) return nonsingular(A);
  const bool all_s = item_double(all(is_sing, std::nullopt, false)) != 0;
  if (all_s) return singular(A);
  Tensor mask = unsqueeze(unsqueeze(is_sing, -1), -1);
  Tensor ones = ones_like(diag_part(A));
  Tensor ident = diag_embed(ones), distinct = diag_embed(cumsum(ones, -1, std::nullopt));
  return where(mask, singular(where(mask, A, distinct)), nonsingular(where(mask, ident, A)));
}

Tensor cholesky_backward(const Tensor& gL, bool upper, const Tensor& L) {
  if (!gL.defined()) return Tensor();
  Tensor L_ = upper ? mH(L) : L, gL_ = upper ? mH(gL) : gL;
  Tensor gA = tril(matmul(mH(L_), gL_), 0);
  gA = (gA + mH(tril(gA, -1))) * 0.5;
  gA = linalg_solve_triangular(mH(L_), gA, true, true, false);
  return linalg_solve_triangular(L_, gA, false, false, false);
}

Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U, const Tensor& S, const Tensor& Vh) {
  if (!gS.defined() && !gU.defined() && !gVh.defined()) return Tensor();
  const int64_t m = rows(U), n = cols(Vh);
  if (!gU.defined() && !gVh.defined())
    return m >= n ? matmul(U, unsqueeze(gS, -1) * Vh) : matmul(U * unsqueeze(gS, -2), Vh);
  auto skew = [](const Tensor& X) { return X - mH(X); };
  Tensor UhgU = gU.defined() ? skew(matmul(mH(U), gU)) : Tensor();
  Tensor VhgV = gVh.defined() ? skew(matmul(Vh, mH(gVh))) : Tensor();
  Tensor S2 = S * S;
  Tensor E = unsqueeze(S2, -2) - unsqueeze(S2, -1) + diag_embed(ones_like(S));
  Tensor gA;
  if (gU.defined() && gVh.defined()) gA = (UhgU * unsqueeze(S, -2) + unsqueeze(S, -1) * VhgV) / E;
  else if (gU.defined()) gA = (UhgU / E) * unsqueeze(S, -2);
  else gA = unsqueeze(S, -1) * (VhgV / E);
  if (gS.defined()) gA = gA + diag_embed(gS);
  if (m > n && gU.defined()) {
    gA = matmul(U, gA);
    Tensor gUSinv = gU / unsqueeze(S, -2);
    gA = gA + gUSinv - matmul(U, matmul(mH(U), gUSinv));
    return matmul(gA, Vh);
  }
  if (m < n && gVh.defined()) {
    gA = matmul(gA, Vh);
    Tensor SinvgVh = gVh / unsqueeze(S, -1);
    gA = gA + SinvgVh - matmul(matmul(SinvgVh, mH(Vh)), Vh);
    return matmul(U, gA);
  }
  return m >= n ? matmul(U, matmul(gA, Vh)) : matmul(matmul(U, gA), Vh);
}

Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  if (!gL.defined() && !gV.defined()) return Tensor();
  Tensor Vh = mH(V);
  if (!gV.defined()) return matmul(V * unsqueeze(gL, -2), Vh);
  Tensor VhgV = matmul(Vh, gV);
  VhgV = (VhgV - mH(VhgV)) * 0.5;
  Tensor E = unsqueeze(L, -2) - unsqueeze(L, -1) + diag_embed(ones_like(L));
  Tensor gA = VhgV / E;
  if (gL.defined()) gA = gA - diag_embed(diag_part(gA)) + diag_embed(gL);
  return matmul(V, matmul(gA, Vh));
}

Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R, const std::string& mode) {
  AG_CHECK(mode != "r", "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, "
                        "mode='reduced') if you are going to differentiate through linalg.qr.");
  const int64_t m = rows(Q), n = cols(R);
  AG_CHECK(mode == "reduced" || m <= n, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  if (!gQ.defined() && !gR.defined()) return Tensor();
  Tensor gA;
  if (gQ.defined()) gA = gR.defined() ? matmul(gR, mH(R)) - matmul(mH(Q), gQ) : -matmul(mH(Q), gQ);
  else gA = matmul(gR, mH(R));
  if (m >= n) {
    Tensor sym = triu(gA, 0);
    sym = sym + mH(sym);
    sym = sym - diag_embed(diag_part(sym) * 0.5);
    gA = matmul(Q, sym);
    if (gQ.defined()) gA = gA + gQ;
    return linalg_solve_triangular(mH(R), gA, false, false, false);
  }
  Tensor X = -gA;
  Tensor sk = tril(X - mH(X), 0);
  gA = matmul(Q, sk);
  gA = linalg_solve_triangular(mH(narrow(R, -1, 0, m)), gA, false, false, false);
  gA = cat({gA, full(with(batch_of(R), {rows(gA), n - m}), Scalar(0.0), gA.dtype(), gA.device())}, -1);
  if (gR.defined()) gA = gA + matmul(Q, gR);
  return gA;
}

// L = tril(LU[:, :k], -1) + I, U = triu(LU[:k]) (differentiable: used inside backward formulas).
std::pair<Tensor, Tensor> unpack_lu(const Tensor& LU) {
  const int64_t m = rows(LU), n = cols(LU), k = std::min(m, n);
  Tensor L = tril(narrow(LU, -1, 0, k), -1) + eye(m, k, LU.dtype(), LU.device());
  Tensor U = triu(narrow(LU, -2, 0, k), 0);
  return {L, U};
}

// P with A = P L U from LAPACK's row interchanges, shaped [..., m, m].
// The m x m permutation matrices of 1-based LAPACK pivots (the first `swaps` of each row of piv, all when < 0).
// Pivots come from users too (torch.lu_unpack): as torch's unpack_pivots kernel, each must lie in [1, m].
Tensor perm_matrix(const Tensor& piv, int64_t m, const Tensor& like, int64_t swaps = -1) {
  Tensor pc = contiguous(piv);   // (at least 1-d: lu_unpack checks a user's pivots before)
  const Shape bs = batch_of(pc, 1);
  const int64_t B = shape_numel(bs), kp = pc.sizes().back();
  const int64_t k = swaps < 0 ? kp : swaps;
  AG_CHECK(kp >= k, "torch.lu_unpack: Expected LU_pivots.size(-1) to be at least min(m, n) = ", k, ", got ", kp);
  Tensor P = full({B, m, m}, Scalar(0.0), like.dtype(), like.device());
  Tensor P64 = full({B, m, m}, Scalar(0.0), ScalarType::Float64, like.device());
  double* pd = P64.data<double>();
  const int32_t* pv = pc.data<int32_t>();
  std::vector<int64_t> perm(m);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t to = static_cast<int64_t>(pv[b * kp + i]) - 1;
      AG_CHECK(to >= 0 && to < m, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                                  "Did you use the LU factorization from torch.linalg.lu_factor?");
      std::swap(perm[i], perm[to]);
    }
    for (int64_t r = 0; r < m; ++r) pd[b * m * m + perm[r] * m + r] = 1.0;
  }
  return reshape(to_dtype(P64, like.dtype()), with(bs, {m, m}));
}

Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U, bool pivot) {
  if (!gL.defined() && !gU.defined()) return Tensor();
  const int64_t m = rows(L), n = cols(U), k = std::min(m, n);
  Tensor gA;
  if (m == n) {
    if (gL.defined()) gA = tril(matmul(mH(L), gL), -1);
    if (gU.defined()) gA = add_opt(gA, triu(matmul(gU, mH(U)), 0));
    gA = linalg_solve_triangular(mH(U), gA, false, false, false);
    gA = linalg_solve_triangular(mH(L), gA, true, true, true);
  } else if (m < n) {
    Tensor U1 = narrow(U, -1, 0, k);
    if (gL.defined()) gA = matmul(mH(L), gL);
    if (gU.defined()) gA = add_opt(gA, -matmul(triu(gU, 0), mH(U)));
    gA = linalg_solve_triangular(mH(U1), tril(gA, -1), false, false, false);
    if (gU.defined()) gA = cat({gA + triu(narrow(gU, -1, 0, k), 0), narrow(gU, -1, k, n - k)}, -1);
    gA = linalg_solve_triangular(mH(L), gA, true, true, true);
    if (!gU.defined()) gA = cat({gA, zeros_like(narrow(U, -1, k, n - k))}, -1);
  } else {
    Tensor L1 = narrow(L, -2, 0, k);
    if (gU.defined()) gA = matmul(gU, mH(U));
    if (gL.defined()) gA = add_opt(gA, -matmul(mH(L), tril(gL, -1)));
    gA = linalg_solve_triangular(mH(L1), triu(gA, 0), true, true, true);
    if (gL.defined()) gA = cat({gA + tril(narrow(gL, -2, 0, k), -1), narrow(gL, -2, k, m - k)}, -2);
    gA = linalg_solve_triangular(mH(U), gA, false, false, false);
    if (!gL.defined()) gA = cat({gA, zeros_like(narrow(L, -2, k, m - k))}, -2);
  }
  return pivot ? matmul(P, gA) : gA;
}

Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A) {
  const int64_t m = rows(A), n = cols(A);
  Tensor pinvAh = mH(pinvA), gradh = mH(grad);
  if (m <= n) {
    Tensor K = matmul(gradh, pinvA);
    Tensor KpinvAh = matmul(K, pinvAh);
    return -mH(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh) + matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A));
  }
  Tensor K = matmul(pinvA, gradh);
  Tensor pinvAhK = matmul(pinvAh, K);
  return -mH(matmul(K, pinvA)) + matmul(matmul(gradh - matmul(A, K), pinvA), pinvAh) + pinvAhK - matmul(matmul(pinvAhK, pinvA), A);
}

bool vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (A.dim() - 1 != B.dim()) return false;
  for (int64_t i = 0; i < B.dim(); ++i) if (B.sizes()[i] != A.sizes()[i]) return false;
  return true;
}
}  // namespace

// ---------------------------------------------------------------- inverse, det, slogdet
std::pair<Tensor, Tensor> linalg_inv_ex(const Tensor& A0, bool check_errors, const char* name) {
  Tensor A = A0;
  check_matrix(A, name, nullptr);
  check_square(A, name);
  const int64_t n = rows(A);
  Lu lu = raw_lu(A);
  if (check_errors)
    check_info(lu.info, A.dim() > 2, name, [](int i) {
      return "The diagonal element " + std::to_string(i) +
             " is zero, the inversion could not be completed because the input matrix is singular.";
    });
  Tensor inv;
  {
    autograd::AutoGradMode off(false);
    inv = raw_lu_solve(lu.LU, lu.piv, contiguous(expand(eye_of(n, A), A.sizes())), false);
  }
  fw_rule(inv, {&A}, [&](const variable_list& t) { return -matmul(inv, matmul(t[0], inv)); });
  if (auto node = autograd::make_node("LinalgInvExBackward0", {&A}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor()};
        Tensor ih = mH(c.get(0));
        return variable_list{-matmul(ih, matmul(g[0], ih))};
      })) {
    autograd::set_history(node, {&inv});
    node->save(inv, true);
  }
  return {inv, lu.info};
}

Tensor linalg_det(const Tensor& A0, const char* name) {
  Tensor A = A0;
  check_matrix(A, name, "lu_cpu");
  check_square(A, name);
  Tensor det;
  {
    autograd::AutoGradMode off(false);
    Lu lu = raw_lu(A);
    det = prod(diag_part(lu.LU), -1, false, std::nullopt) * perm_sign(lu.piv, batch_of(A), A);
  }
  fw_rule(det, {&A}, [&](const variable_list& t) { return sum(det_backward(ones_like(det), det, A) * t[0], IntList{-2, -1}, false, std::nullopt); });
  if (auto node = autograd::make_node("LinalgDetBackward0", {&A}, AG_BW {
        return variable_list{det_backward(g[0], c.get(1), c.get(0))};
      })) {
    autograd::set_history(node, {&det});
    node->save(A);
    node->save(det, true);
  }
  return det;
}

std::pair<Tensor, Tensor> linalg_slogdet(const Tensor& A0, const char* name) {
  Tensor A = A0;
  check_matrix(A, name, nullptr);  // torch: "Low precision dtypes not supported" (RuntimeError)
  check_square(A, name);
  Tensor sign, logabs;
  {
    autograd::AutoGradMode off(false);
    Lu lu = raw_lu(A);
    Tensor d = diag_part(lu.LU);
    sign = prod(ampgrad::sign(d), -1, false, std::nullopt) * perm_sign(lu.piv, batch_of(A), A);
    logabs = sum(log(abs(d)), IntList{-1}, false, std::nullopt);
  }
  if (auto node = autograd::make_node("LinalgSlogdetBackward0", {&A}, AG_BW {
        if (!g[1].defined()) return variable_list{Tensor()};
        Tensor M = c.get(0);
        return variable_list{linalg_solve(mH(M), diag_embed(unsqueeze(g[1], -1) * ones_like(diag_part(M))), true)};
      })) {
    autograd::set_history(node, {&sign, &logabs});
    node->save(A);
  }
  return {sign, logabs};
}

// ---------------------------------------------------------------- solve
std::pair<Tensor, Tensor> linalg_solve_ex(const Tensor& A0, const Tensor& B0, bool left, bool check_errors, const char* name) {
  Tensor A = A0, Bt = B0;
  check_matrix(A, name, "lu_cpu");  // torch reaches its LU kernel: NotImplementedError
  check_square(A, name);
  AG_CHECK(Bt.dim() >= 1, name, ": The input tensor B must have at least 1 dimensions.");
  AG_CHECK(A.dtype() == Bt.dtype(), name, ": Expected A and B to have the same dtype, but found A of type ", scalar_type_name(A.dtype()),
           " and B of type ", scalar_type_name(Bt.dtype()), " instead");
  const bool vec = vector_rhs(A, Bt);
  AG_CHECK(left || !vec, name, ": Vector broadcasting of the left hand side is not supported for left=False. In this case "
                               "linalg.solve is equivalent to B / A.squeeze(-1)");
  const int64_t n = rows(A);
  Tensor B2 = vec ? unsqueeze(Bt, -1) : Bt;
  AG_CHECK(B2.dim() >= 2, name, ": The input tensor B must have at least 2 dimensions.");
  const int64_t bn = left ? rows(B2) : cols(B2);
  AG_CHECK(bn == n, name, ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (", n, "x", n, " and ",
           rows(B2), "x", cols(B2), ")");
  Tensor X, info;
  {
    autograd::AutoGradMode off(false);
    auto [Ab, Bb] = broadcast_batch(detach(A), detach(B2));
    Lu lu = raw_lu(Ab);
    info = lu.info;
    if (check_errors)
      check_info(info, false, "torch.linalg.solve", [](int) { return std::string("The solver failed because the input matrix is singular."); });
    X = left ? raw_lu_solve(lu.LU, lu.piv, contiguous(Bb), false) : mH(raw_lu_solve(lu.LU, lu.piv, contiguous(mH(Bb)), true));
    if (!left) X = contiguous(X);
    if (vec) X = squeeze(X, IntList{-1});
  }
  auto backward = [left, vec](const Tensor& gX, const Tensor& M, const Tensor& Xs, bool needA, bool needB) -> variable_list {
    if (!gX.defined()) return {Tensor(), Tensor()};
    Tensor gX_ = vec ? unsqueeze(gX, -1) : gX;
    Tensor gB = linalg_solve(mH(M), gX_, left);
    Tensor gA;
    if (needA) {
      Tensor X_ = vec ? unsqueeze(Xs, -1) : Xs;
      gA = left ? -matmul(gB, mH(X_)) : -matmul(mH(X_), gB);
    }
    return {gA, needB ? (vec ? squeeze(gB, IntList{-1}) : gB) : Tensor()};
  };
  fw_rule(X, {&A, &Bt}, [&](const variable_list& t) {
    // dX = A^-1 (dB - dA X) (left) or (dB - X dA) A^-1
    Tensor X_ = vec ? unsqueeze(X, -1) : X;
    Tensor r = t[1].defined() ? (vec ? unsqueeze(t[1], -1) : t[1]) : Tensor();
    if (t[0].defined()) r = add_opt(r, left ? -matmul(t[0], X_) : -matmul(X_, t[0]));
    Tensor d = linalg_solve(A, r, left);
    return vec ? squeeze(d, IntList{-1}) : d;
  });
  if (auto node = autograd::make_node("LinalgSolveExBackward0", {&A, &Bt}, AG_BW {
        return backward(g[0], c.get(0), c.get(1), c.needs_input_grad(0), c.needs_input_grad(1));
      })) {
    autograd::set_history(node, {&X});
    node->save(A);
    node->save(X, true);
  }
  return {X, info};
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) { return linalg_solve_ex(A, B, left, true).first; }

// ---------------------------------------------------------------- cholesky, triangular solves
std::pair<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A0, bool upper, bool check_errors, const char* node_name, const char* name) {
  Tensor A = A0;
  check_matrix(A, name, "cholesky_cpu");
  check_square(A, name);
  const int64_t n = rows(A);
  Tensor L, info;
  {
    Tensor x = flat3(A);
    Tensor in[1] = {x};
    Tensor out[2] = {empty(x.sizes(), x.dtype(), x.device()), full({x.sizes()[0]}, Scalar(int64_t(0)), ScalarType::Int32, x.device())};
    LinalgArgs a; a.batch = x.sizes()[0]; a.n = n; a.m = n;
    if (n > 0) run_kernel(LinalgArgs::kCholesky, in, out, a);
    L = reshape(out[0], A.sizes());
    info = reshape(out[1], batch_of(A));
  }
  if (check_errors)
    check_info(info, A.dim() > 2, name, [](int i) {
      return "The factorization could not be completed because the input is not positive-definite (the leading minor of order " +
             std::to_string(i) + " is not positive-definite).";
    });
  if (upper) { autograd::AutoGradMode off(false); L = contiguous(mH(L)); }
  fw_rule(L, {&A}, [&](const variable_list& t) {
    Tensor L_ = upper ? mH(L) : L;
    Tensor dL = linalg_solve_triangular(L_, t[0], false, true, false);
    dL = linalg_solve_triangular(mH(L_), dL, true, false, false);
    dL = tril(dL, 0) - diag_embed(diag_part(dL) * 0.5);
    dL = matmul(L_, dL);
    return upper ? mH(dL) : dL;
  });
  if (auto node = autograd::make_node(node_name, {&A}, AG_BW { return variable_list{cholesky_backward(g[0], upper, c.get(0))}; })) {
    autograd::set_history(node, {&L});
    node->save(L, true);
  }
  return {L, info};
}

Tensor linalg_solve_triangular(const Tensor& A0, const Tensor& B0, bool upper, bool left, bool unit) {
  Tensor A = A0, Bt = B0;
  const char* name = "linalg.solve_triangular";
  AG_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  AG_CHECK(Bt.dim() >= 2, name, ": The input tensor B must have at least 2 dimensions.");
  check_matrix(A, name, "triangular_solve_cpu");
  check_square(A, name);
  AG_CHECK(A.dtype() == Bt.dtype(), name, ": Expected A and B to have the same dtype, but found A of type ", scalar_type_name(A.dtype()),
           " and B of type ", scalar_type_name(Bt.dtype()), " instead");
  const int64_t n = rows(A);
  AG_CHECK((left ? rows(Bt) : cols(Bt)) == n, name, ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
           " (", n, "x", n, " and ", rows(Bt), "x", cols(Bt), ")");
  Tensor X;
  {
    autograd::AutoGradMode off(false);
    auto [Ab, Bb] = broadcast_batch(detach(A), detach(Bt));
    X = left ? raw_tri_solve(Ab, Bb, upper, unit) : contiguous(mH(raw_tri_solve(contiguous(mH(Ab)), contiguous(mH(Bb)), !upper, unit)));
  }
  fw_rule(X, {&A, &Bt}, [&](const variable_list& t) {
    Tensor r = t[1];
    if (t[0].defined()) {
      Tensor dA = upper ? triu(t[0], unit ? 1 : 0) : tril(t[0], unit ? -1 : 0);
      r = add_opt(r, left ? -matmul(dA, X) : -matmul(X, dA));
    }
    return linalg_solve_triangular(A, r, upper, left, unit);
  });
  if (auto node = autograd::make_node("LinalgSolveTriangularBackward0", {&A, &Bt}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor(), Tensor()};
        Tensor M = c.get(0), Xs = c.get(1);
        Tensor GB = linalg_solve_triangular(mH(M), g[0], !upper, left, unit);
        Tensor GA;
        if (c.needs_input_grad(0)) {
          GA = left ? -matmul(GB, mH(Xs)) : -matmul(mH(Xs), GB);
          GA = upper ? triu(GA, unit ? 1 : 0) : tril(GA, unit ? -1 : 0);
        }
        return variable_list{GA, c.needs_input_grad(1) ? GB : Tensor()};
      })) {
    autograd::set_history(node, {&X});
    node->save(A);
    node->save(X, true);
  }
  return X;
}

// ---------------------------------------------------------------- qr, eigh, svd
std::pair<Tensor, Tensor> linalg_qr(const Tensor& A0, const std::string& mode) {
  Tensor A = A0;
  AG_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
           "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(A, "linalg.qr", "geqrf_cpu");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n);
  const int qm = mode == "reduced" ? 0 : mode == "complete" ? 1 : 2;
  const int64_t qc = qm == 1 ? m : k;
  const Shape bs = batch_of(A);
  Tensor Q, R;
  {
    Tensor x = flat3(A);
    const int64_t B = x.sizes()[0];
    Tensor in[1] = {x};
    Tensor out[2] = {qm == 2 ? Tensor() : empty({B, m, qc}, A.dtype(), A.device()), empty({B, qc, n}, A.dtype(), A.device())};
    LinalgArgs a; a.batch = B; a.m = m; a.n = n; a.qr_mode = qm;
    if (m > 0 && n > 0) run_kernel(LinalgArgs::kQr, in, out, a);
    else {
      autograd::AutoGradMode off(false);
      if (out[0].defined()) { Tensor e = contiguous(expand(eye(m, qc, A.dtype(), A.device()), {B, m, qc})); out[0] = e; }
      if (out[1].numel()) zero_(out[1]);
    }
    Q = qm == 2 ? empty({0}, A.dtype(), A.device()) : reshape(out[0], with(bs, {m, qc}));
    R = reshape(out[1], with(bs, {qc, n}));
  }
  if (auto node = autograd::make_node("LinalgQrBackward0", {&A}, AG_BW {
        return variable_list{qr_backward(g[0], g[1], c.get(0), c.get(1), mode)};
      })) {
    autograd::set_history(node, {&Q, &R});
    node->save(Q, true);
    node->save(R, true);
  }
  return {Q, R};
}

std::pair<Tensor, Tensor> linalg_eigh(const Tensor& A0, const std::string& uplo, bool compute_v, const char* name) {
  Tensor A = A0;
  AG_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_matrix(A, name, "linalg_eigh_cpu");
  check_square(A, name);
  const int64_t n = rows(A);
  const Shape bs = batch_of(A);
  // eigvalsh still computes the vectors when A needs a gradient (torch's _may_require_fw_or_bw_grad).
  const bool want_v = compute_v || autograd::records({&A});
  Tensor w, V;
  {
    Tensor x = flat3(A);
    const int64_t B = x.sizes()[0];
    Tensor in[1] = {x};
    Tensor out[2] = {empty({B, n}, A.dtype(), A.device()), want_v ? empty({B, n, n}, A.dtype(), A.device()) : Tensor()};
    LinalgArgs a; a.batch = B; a.n = n; a.m = n; a.upper = uplo == "U" || uplo == "u"; a.compute = want_v;
    if (n > 0) run_kernel(LinalgArgs::kEigh, in, out, a);
    w = reshape(out[0], with(bs, {n}));
    V = want_v ? reshape(out[1], A.sizes()) : empty({0}, A.dtype(), A.device());
  }
  if (auto node = autograd::make_node("LinalgEighBackward0", {&A}, AG_BW {
        return variable_list{eigh_backward(g[0], g[1], c.get(0), c.get(1))};
      })) {
    autograd::set_history(node, {&w, &V});  // V too when only w is returned: double backward reaches A through it
    node->save(w, true);
    node->save(V, true);
  }
  return {w, compute_v ? V : Tensor()};
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A0, bool full_matrices, bool compute_uv, const char* name) {
  Tensor A = A0;
  check_matrix(A, name, "linalg_svd_cpu");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n);
  const Shape bs = batch_of(A);
  const bool want_uv = compute_uv || autograd::records({&A});
  const bool full = compute_uv && full_matrices;
  const int64_t ku = full ? m : k, kv = full ? n : k;
  Tensor U, S, Vh;
  {
    Tensor x = flat3(A);
    const int64_t B = x.sizes()[0];
    Tensor in[1] = {x};
    Tensor out[3] = {want_uv ? empty({B, m, ku}, A.dtype(), A.device()) : Tensor(), empty({B, k}, A.dtype(), A.device()),
                     want_uv ? empty({B, kv, n}, A.dtype(), A.device()) : Tensor()};
    LinalgArgs a; a.batch = B; a.m = m; a.n = n; a.full = full; a.compute = want_uv;
    if (m > 0 && n > 0) run_kernel(LinalgArgs::kSvd, in, out, a);
    else if (want_uv) {
      autograd::AutoGradMode off(false);
      out[0] = contiguous(expand(eye(m, ku, A.dtype(), A.device()), {B, m, ku}));
      out[2] = contiguous(expand(eye(kv, n, A.dtype(), A.device()), {B, kv, n}));
    }
    S = reshape(out[1], with(bs, {k}));
    if (want_uv) { U = reshape(out[0], with(bs, {m, ku})); Vh = reshape(out[2], with(bs, {kv, n})); }
  }
  if (auto node = autograd::make_node("LinalgSvdBackward0", {&A}, AG_BW {
        Tensor gU = g[0], gS = g[1], gVh = g[2];
        Tensor Us = c.get(0), Ss = c.get(1), Vhs = c.get(2);
        if (full) {
          const int64_t kk = Ss.sizes().back();
          Us = narrow(Us, -1, 0, kk); Vhs = narrow(Vhs, -2, 0, kk);
          if (gU.defined()) gU = narrow(gU, -1, 0, kk);
          if (gVh.defined()) gVh = narrow(gVh, -2, 0, kk);
        }
        return variable_list{svd_backward(gU, gS, gVh, Us, Ss, Vhs)};
      })) {
    autograd::set_history(node, {&U, &S, &Vh});  // U, Vh too for svdvals: double backward reaches A through them
    node->save(U, true);
    node->save(S, true);
    node->save(Vh, true);
  }
  if (!compute_uv) return {empty({0}, A.dtype(), A.device()), S, empty({0}, A.dtype(), A.device())};
  return {U, S, Vh};
}

// ---------------------------------------------------------------- LU
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A0, bool pivot, bool check_errors, const char* name) {
  Tensor A = A0;
  // torch's lu_factor has no dtype check of its own: an integer or bool input reaches the LU kernel
  AG_CHECK_NOT_IMPL(A.dim() < 2 || is_floating(A.dtype()), "\"lu_cpu\" not implemented for '", scalar_type_name(A.dtype()), "'");
  check_matrix(A, name, "lu_cpu");
  AG_CHECK(pivot, name, ": LU without pivoting is not implemented on the CPU");
  Lu lu = raw_lu(A);
  if (check_errors)  // torch raises a plain RuntimeError here, not LinAlgError
    try {
      check_info(lu.info, false, "torch.linalg.lu_factor", [](int i) {
      return "U[" + std::to_string(i) + "," + std::to_string(i) +
             "] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, "
             "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
      });
    } catch (const LinAlgError& e) {
      throw RuntimeError(e.what());
    }
  Tensor LU = lu.LU;
  if (auto node = autograd::make_node("LinalgLuFactorExBackward0", {&A}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor()};
        Tensor LUs = c.get(0), piv = c.get(1);
        auto [L, U] = unpack_lu(LUs);
        const int64_t kk = std::min(rows(LUs), cols(LUs));
        Tensor P = perm_matrix(piv, rows(LUs), LUs);
        return variable_list{lu_backward(tril(narrow(g[0], -1, 0, kk), -1), triu(narrow(g[0], -2, 0, kk), 0), P, L, U, true)};
      })) {
    autograd::set_history(node, {&LU});
    node->save(LU, true);
    node->save(lu.piv);
  }
  return {LU, lu.piv, lu.info};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU0, const Tensor& piv, bool unpack_data, bool unpack_pivots) {
  Tensor LU = LU0;
  AG_CHECK(LU.dim() >= 2, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU.sizes().size(), " instead");
  AG_CHECK(piv.dtype() == ScalarType::Int32, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                                             "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
  const int64_t m = rows(LU), n = cols(LU), k = std::min(m, n);
  Tensor P = empty({0}, LU.dtype(), LU.device());
  if (unpack_pivots) {
    // min(m, n) == 0: no pivot is read (torch returns identities shaped by LU whatever the pivots' shape)
    const Shape lb = batch_of(LU, 2);
    Tensor pv = k == 0 ? empty(with(lb, {0}), ScalarType::Int32, LU.device()) : piv;
    AG_CHECK(pv.dim() >= 1, "torch.lu_unpack: LU_pivots must have at least 1 dimension");
    AG_CHECK(lb == batch_of(pv, 1), "torch.lu_unpack: Expected LU_pivots of shape ", shape_str(with(lb, {k})),
             " for LU of shape ", shape_str(LU.sizes()), ", got ", shape_str(pv.sizes()));
    P = perm_matrix(pv, m, LU, k);
  }
  Tensor L, U;
  if (unpack_data) {
    autograd::AutoGradMode off(false);
    std::tie(L, U) = unpack_lu(detach(LU));
  } else {
    L = empty({0}, LU.dtype(), LU.device());
    U = empty({0}, LU.dtype(), LU.device());
  }
  if (unpack_data)
    if (auto node = autograd::make_node("LuUnpackBackward0", {&LU}, AG_BW {
          Tensor gL = g[0], gU = g[1];
          if (!gL.defined() && !gU.defined()) return variable_list{Tensor()};
          if (gL.defined() && gU.defined()) {
            if (m == n) return variable_list{tril(gL, -1) + triu(gU, 0)};
            Tensor A1 = tril(narrow(gL, -2, 0, k), -1) + triu(narrow(gU, -1, 0, k), 0);
            Tensor A2 = m > n ? narrow(gL, -2, k, m - k) : narrow(gU, -1, k, n - k);
            return variable_list{cat({A1, A2}, m > n ? -2 : -1)};
          }
          if (gL.defined()) {
            if (m >= n) return variable_list{tril(gL, -1)};
            return variable_list{cat({tril(gL, -1), full(with(batch_of(gL), {m, n - m}), Scalar(0.0), gL.dtype(), gL.device())}, -1)};
          }
          if (n >= m) return variable_list{triu(gU, 0)};
          return variable_list{cat({triu(gU, 0), full(with(batch_of(gU), {m - n, n}), Scalar(0.0), gU.dtype(), gU.device())}, -2)};
        })) {
      autograd::set_history(node, {&L, &U});
    }
  return {P, L, U};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A0, bool pivot) {
  Tensor A = A0;
  check_matrix(A, "linalg.lu", "lu_cpu");
  AG_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  Tensor P, L, U;
  {
    autograd::AutoGradMode off(false);
    Lu lu = raw_lu(A);
    std::tie(L, U) = unpack_lu(lu.LU);
    L = contiguous(L); U = contiguous(U);
    P = perm_matrix(lu.piv, rows(A), A);
  }
  if (auto node = autograd::make_node("LinalgLuBackward0", {&A}, AG_BW {
        return variable_list{lu_backward(g[0], g[1], c.get(0), c.get(1), c.get(2), pivot)};
      })) {
    autograd::set_history(node, {&L, &U});
    node->save(P);
    node->save(L, true);
    node->save(U, true);
  }
  return {P, L, U};
}

Tensor linalg_lu_solve(const Tensor& LU0, const Tensor& piv, const Tensor& B0, bool left, bool adjoint) {
  Tensor LU = LU0, Bt = B0;
  const char* name = "linalg.lu_solve";
  AG_CHECK(LU.dim() >= 2, "torch.linalg.lu_solve: Expected LU to have at least 2 dimensions, but it has ", LU.dim(), " dimensions instead");
  AG_CHECK(Bt.dim() >= 2, "torch.linalg.lu_solve: Expected B to have at least 2 dimensions, but it has ", Bt.dim(), " dimensions instead");
  check_matrix(LU, name, "lu_solve_cpu");
  check_square(LU, "torch.linalg.lu_solve");
  const int64_t n = rows(LU);
  AG_CHECK((left ? rows(Bt) : cols(Bt)) == n, "torch.linalg.lu_solve: Incompatible shapes of A and B for the equation ",
           left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", rows(Bt), "x", cols(Bt), ")");
  AG_CHECK(piv.dtype() == ScalarType::Int32, "torch.linalg.lu_solve: Expected pivots to be int32, got ", scalar_type_name(piv.dtype()));
  AG_CHECK(LU.dtype() == Bt.dtype(), "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type ",
           scalar_type_name(LU.dtype()), " and B of type ", scalar_type_name(Bt.dtype()), " instead");
  Tensor X;
  {
    autograd::AutoGradMode off(false);
    auto [L2, B2] = broadcast_batch(detach(LU), detach(Bt));
    Shape bs = batch_of(L2);
    Tensor p2 = contiguous(expand(piv, with(bs, {n})));
    const int32_t* pv = p2.data<int32_t>();
    for (int64_t i = 0, N = p2.numel(); i < N; ++i)
      AG_CHECK(pv[i] >= 1 && pv[i] <= n, "Pivots given to lu_solve must all be ", pv[i] < 1 ? "greater or equal to 1" : "smaller or equal to LU.size(-2)",
               ". Did you properly pass the result of lu_factor?");
    if (left) X = raw_lu_solve(contiguous(L2), p2, contiguous(B2), adjoint);
    else X = contiguous(mH(raw_lu_solve(contiguous(L2), p2, contiguous(mH(B2)), !adjoint)));
  }
  if (auto node = autograd::make_node("LinalgLuSolveBackward0", {&LU, &Bt}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor(), Tensor()};
        Tensor LUs = c.get(0), pv = c.get(1), Xs = c.get(2), gX = g[0];
        // gB solves the adjoint system; gA follows from the four cases, then A = P L U pulls gA back to
        // the packed factors: gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA).
        Tensor gB = linalg_lu_solve(LUs, pv, gX, left, !adjoint), gLU;
        if (c.needs_input_grad(0)) {
          Tensor gA = left ? (adjoint ? -matmul(Xs, mH(gB)) : -matmul(gB, mH(Xs))) : (adjoint ? -matmul(mH(gB), Xs) : -matmul(mH(Xs), gB));
          auto [L, U] = unpack_lu(LUs);
          Tensor PtgA = matmul(mH(perm_matrix(pv, rows(LUs), LUs)), gA);
          gLU = tril(matmul(PtgA, mH(U)), -1) + triu(matmul(mH(L), PtgA), 0);
        }
        return variable_list{gLU, c.needs_input_grad(1) ? gB : Tensor()};
      })) {
    autograd::set_history(node, {&X});
    node->save(LU);
    node->save(piv);
    node->save(X, true);
  }
  return X;
}

// ---------------------------------------------------------------- matrix_exp, cholesky_inverse, pinv
Tensor linalg_matrix_exp(const Tensor& A0) {
  Tensor A = A0;
  const char* name = "linalg.matrix_exp";
  AG_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  AG_CHECK(is_floating(A.dtype()), name, ": Expected a floating point or complex tensor as input. Got ", scalar_type_name(A.dtype()));
  check_square(A, name);
  if (A.dtype() == ScalarType::Float16 || A.dtype() == ScalarType::BFloat16)  // computed in float32, rounded once
    return to_dtype(linalg_matrix_exp(to_dtype(A, ScalarType::Float32)), A.dtype());
  const int64_t n = rows(A);
  Tensor E;
  {
    Tensor x = flat3(A);
    Tensor in[1] = {x};
    Tensor out[1] = {empty(x.sizes(), x.dtype(), x.device())};
    LinalgArgs a; a.batch = x.sizes()[0]; a.n = n; a.m = n;
    if (n == 1) {  // torch: a 1 x 1 matrix is exp of its entry (exp(-inf) = 0, where scaling and squaring gives nan)
      autograd::AutoGradMode off(false);
      E = exp(detach(A));
    } else {
      if (n > 0) run_kernel(LinalgArgs::kMatrixExp, in, out, a);
      E = reshape(out[0], A.sizes());
    }
  }
  // d exp(A)[G] is the top-right block of exp([[A, G], [0, A]]); the adjoint uses A^H.
  auto frechet = [](const Tensor& M, const Tensor& G) {
    const int64_t k = rows(M);
    Tensor z = zeros_like(M);
    Tensor big = cat({cat({M, G}, -1), cat({z, M}, -1)}, -2);
    return narrow(narrow(linalg_matrix_exp(big), -2, 0, k), -1, k, k);
  };
  fw_rule(E, {&A}, [&](const variable_list& t) { return frechet(A, t[0]); });
  if (auto node = autograd::make_node("LinalgMatrixExpBackward0", {&A}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor()};
        return variable_list{frechet(mH(c.get(0)), g[0])};
      })) {
    autograd::set_history(node, {&E});
    node->save(A);
  }
  return E;
}

Tensor cholesky_inverse(const Tensor& L0, bool upper) {
  Tensor L = L0;
  AG_CHECK(L.dim() >= 2, "cholesky_inverse: The input tensor input must have at least 2 dimensions.");
  check_matrix(L, "cholesky_inverse", "cholesky_inverse_out_cpu");
  check_square(L, "cholesky_inverse");
  const int64_t n = rows(L);
  Tensor inv;
  {
    autograd::AutoGradMode off(false);
    Tensor Lo = upper ? contiguous(mH(L)) : contiguous(detach(L));
    Tensor Li = raw_tri_solve(Lo, contiguous(expand(eye_of(n, L), L.sizes())), false, false);
    inv = matmul(mH(Li), Li);
  }
  if (auto node = autograd::make_node("CholeskyInverseBackward0", {&L}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor()};
        Tensor Ls = c.get(0), I = c.get(1);
        Tensor common = g[0] + mH(g[0]);
        common = matmul(I, matmul(common, I));
        return variable_list{upper ? -matmul(Ls, common) : -matmul(common, Ls)};
      })) {
    autograd::set_history(node, {&inv});
    node->save(L);
    node->save(inv, true);
  }
  return inv;
}

Tensor linalg_pinv(const Tensor& A0, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  Tensor A = A0;
  check_matrix(A, "linalg.pinv", hermitian ? "linalg_eigh_cpu" : "linalg_svd_cpu");
  const int64_t m = rows(A), n = cols(A);
  const double eps = A.dtype() == ScalarType::Float64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double at = atol.value_or(0.0);
  const double rt = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : eps * std::max(m, n));
  Tensor P;
  {
    autograd::AutoGradMode off(false);
    Tensor Ad = detach(A);
    if (m == 0 || n == 0) {
      P = full(with(batch_of(A), {n, m}), Scalar(0.0), A.dtype(), A.device());
    } else if (hermitian) {
      auto [w, V] = linalg_eigh(Ad, "L", true);
      Tensor aw = abs(w);
      Tensor tol = clamp(amax(aw, IntList{-1}, true) * rt, Scalar(at), std::nullopt);
      Tensor inv = where(compare(Op::gt, aw, tol), reciprocal(w), zeros_like(w));
      P = matmul(V * unsqueeze(inv, -2), mH(V));
    } else {
      auto [U, S, Vh] = linalg_svd(Ad, false, true);
      Tensor smax = narrow(S, -1, 0, 1);
      Tensor tol = clamp(smax * rt, Scalar(at), std::nullopt);
      Tensor inv = where(compare(Op::gt, S, tol), reciprocal(S), zeros_like(S));
      P = matmul(mH(Vh) * unsqueeze(inv, -2), mH(U));
    }
  }
  if (auto node = autograd::make_node("LinalgPinvBackward0", {&A}, AG_BW {
        if (!g[0].defined()) return variable_list{Tensor()};
        return variable_list{pinv_backward(g[0], c.get(1), c.get(0))};
      })) {
    autograd::set_history(node, {&P});
    node->save(A);
    node->save(P, true);
  }
  return P;
}

}  // namespace ampgrad
