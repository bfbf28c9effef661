"""GradScaler: scales the loss so fp16 gradients don't underflow, unscales before the step, skips
steps whose gradients overflowed and adapts the scale (torch.amp.GradScaler's state machine).
The scale and found_inf stay tensors on the device; with ampgrad's optimizers (which accept
grad_scale / found_inf) a step needs no host sync.

Beyond torch (opt-in keyword arguments; the defaults are torch's behaviour exactly):
- min_scale / max_scale: the scale is clamped into the range, with a warning when an update would
  leave it (pytorch#99640 asks for a floor, pytorch#98828 reports the scale itself overflowing).
  Checking the range reads the scale on the host once per update (only when a bound is set).
- hysteresis=N (Megatron-LM's DynamicGradScaler): back off only after N consecutive overflowing
  steps; a step with finite gradients re-arms the counter. Overflowing steps are skipped as always.
- per-loss scales (Apex's amp.scale_loss(loss, optimizer, loss_id=i)): scale(loss, loss_id=i), then
  unscale_(optimizer, loss_id=i) right after that loss's backward (the unscaled gradients are set
  aside so the next loss's backward starts clean); step() puts their sum back. Each loss id has its
  own scale, growth tracker and hysteresis, updated from its own overflows; the step is skipped when
  any loss overflowed. loss_id=0 is the default scale.
- stats(): steps, skipped steps and the scale history (kept as device tensors, read on the call).
- unscale_and_clip_(optimizer, max_norm): scaler.unscale_ + clip_grad_norm_ in two passes over the
  gradients (nn.utils.clip_grad.unscale_and_clip_grad_norm_).
"""
import enum
import warnings
from collections import defaultdict, deque

from .. import _C
from .._creation import full
from ._unscale_clip import unscale_and_clip_grad_norm_
from ..autograd import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True, *, min_scale=None, max_scale=None, hysteresis=1):
        self._device = device
        self._enabled = enabled
        if min_scale is not None and not min_scale > 0:
            raise ValueError(f"min_scale must be > 0, got {min_scale}")
        if max_scale is not None and min_scale is not None and max_scale < min_scale:
            raise ValueError(f"max_scale ({max_scale}) must be >= min_scale ({min_scale})")
        if isinstance(hysteresis, bool) or not isinstance(hysteresis, int) or hysteresis < 1:
            raise ValueError(f"hysteresis must be an int >= 1, got {hysteresis!r}")
        self._min_scale = None if min_scale is None else float(min_scale)
        self._max_scale = None if max_scale is None else float(max_scale)
        self._hysteresis = hysteresis
        self._hysteresis_tracker = None  # per loss id: consecutive overflows still tolerated
        self._loss_scales = {}           # loss id >= 1 -> [scale, growth_tracker] (loss 0 is _scale)
        self._loss_init = {}             # loss id >= 1 -> (scale, growth tracker) from a state dict
        self._loss_found_inf = {}        # this iteration: loss id -> found_inf (unscale_(..., loss_id=))
        self._scaled_loss_ids = set()
        self._history = deque(maxlen=100000)  # (step, {loss id: scale tensor}, found_inf tensor)
        self._steps = 0
        if device == "cuda" and enabled and not _C._cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), self._init_scale, dtype=_C.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_C.int32, device=dev)

    def _loss_slot(self, loss_id, dev):
        """[scale, growth_tracker] of a loss id >= 1, created at init_scale on first use."""
        slot = self._loss_scales.get(loss_id)
        if slot is None:
            init, tracker = self._loss_init.pop(loss_id, (self._init_scale, 0))
            slot = [full((), init, dtype=_C.float32, device=dev), full((), tracker, dtype=_C.int32, device=dev)]
            self._loss_scales[loss_id] = slot
        return slot

    @staticmethod
    def _check_loss_id(loss_id):
        if isinstance(loss_id, bool) or not isinstance(loss_id, int) or loss_id < 0:
            raise ValueError(f"loss_id must be an int >= 0, got {loss_id!r}")

    def _scale_of(self, loss_id):
        return self._scale if loss_id == 0 else self._loss_scales[loss_id][0]

    def scale(self, outputs, loss_id=None):
        """Multiplies `outputs` (a tensor or nested iterable of tensors) by the scale factor.
        loss_id (ampgrad): use that loss's own scale (see unscale_(optimizer, loss_id=))."""
        if not self._enabled:
            return outputs
        if loss_id is not None:
            self._check_loss_id(loss_id)
            if not isinstance(outputs, _C.Tensor):
                raise ValueError("scale(outputs, loss_id=...) expects a single loss tensor")
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            if loss_id != 0:
                self._loss_slot(loss_id, self._scale.device)
            self._scaled_loss_ids.add(loss_id)
            return outputs * self._scale_of(loss_id).to(device=outputs.device, non_blocking=True)
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        stash = []

        def apply_scale(val):
            if isinstance(val, _C.Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                if not stash:
                    stash.append(self._scale)
                return val * stash[0].to(val.device)
            if isinstance(val, (list, tuple)):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        # Group grads by (device, dtype) so each group is one fused kernel call.
        per_device_found_inf = {}
        groups = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == _C.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    groups[(str(param.grad.device), param.grad.dtype)].append(param.grad)
            for (dev, _), grads in groups.items():
                if dev not in per_device_found_inf:
                    per_device_found_inf[dev] = found_inf.clone() if per_device_found_inf else found_inf
                    if dev != str(found_inf.device):
                        per_device_found_inf[dev] = found_inf.to(dev)
                _C._amp_foreach_non_finite_check_and_unscale_(grads, per_device_found_inf[dev], inv_scale.to(dev))
        return per_device_found_inf

    def unscale_(self, optimizer, loss_id=None):
        """Divides the optimizer's gradients by the scale (once per step), recording infs/NaNs.
        loss_id (ampgrad): unscale the gradients of that loss's backward by its own scale and set them
        aside (step() puts the sum of every loss's unscaled gradients back)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        if loss_id is not None:
            return self._unscale_loss_(optimizer, loss_id)
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in fp64, as torch does, so inv_scale is exact for powers of two and close otherwise.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_C.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _unscale_loss_(self, optimizer, loss_id):
        self._check_loss_id(loss_id)
        if loss_id not in self._scaled_loss_ids:
            raise RuntimeError(f"unscale_(optimizer, loss_id={loss_id}) without scale(loss, loss_id={loss_id}) in this "
                               "iteration.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is not OptState.READY:
            raise RuntimeError("unscale_(optimizer, loss_id=...) must come before step() and before a plain unscale_().")
        done = state.setdefault("unscaled_loss_ids", set())
        if loss_id in done:
            raise RuntimeError(f"unscale_() has already been called for loss_id={loss_id} on this optimizer since the "
                               "last update().")
        scale = self._scale_of(loss_id)
        inv_scale = scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_C.float32, device=scale.device)
        per_dev = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        for f in per_dev.values():
            f = f.to(scale.device)
            prev = self._loss_found_inf.get(loss_id)
            self._loss_found_inf[loss_id] = f if prev is None else prev + f
        stash = state.setdefault("stash", {})
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    key = id(p)
                    stash[key] = (p, p.grad if key not in stash else stash[key][1] + p.grad)
                    p.grad = None
        done.add(loss_id)

    def _restore_stash(self, optimizer, state):
        """Per-loss mode: the sum of the set-aside unscaled gradients becomes .grad again; the stage is
        UNSCALED with found_inf = any loss overflowed."""
        done = state.get("unscaled_loss_ids", set())
        missing = sorted(self._scaled_loss_ids - done)
        if missing:
            raise RuntimeError(f"loss_id={missing[0]} was scaled but not unscaled: with per-loss scales call "
                               f"scaler.unscale_(optimizer, loss_id={missing[0]}) after that loss's backward().")
        with no_grad():
            for p, g in state.pop("stash", {}).values():
                p.grad = g if p.grad is None else p.grad + g
        found = full((), 0.0, dtype=_C.float32, device=self._scale.device)
        for i in done:
            found = found + self._loss_found_inf[i]
        state["found_inf_per_device"] = {str(found.device): found}
        state["stage"] = OptState.UNSCALED

    def _per_loss_mode(self):
        return len(self._scaled_loss_ids - {0}) > 0 or bool(self._loss_found_inf)

    def unscale_and_clip_(self, optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
        """unscale_(optimizer) followed by clip_grad_norm_ of its parameters, in two passes over the
        gradients (norms + non-finite check, then one multiply by clip_coef / scale). Returns the total
        norm of the unscaled gradients, as clip_grad_norm_. Also usable with a disabled scaler."""
        params = [p for group in optimizer.param_groups for p in group["params"]]
        if not self._enabled:
            return unscale_and_clip_grad_norm_(params, max_norm, norm_type=norm_type,
                                               error_if_nonfinite=error_if_nonfinite)
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._per_loss_mode():
            self._restore_stash(optimizer, state)
            return unscale_and_clip_grad_norm_(params, max_norm, norm_type=norm_type,
                                               error_if_nonfinite=error_if_nonfinite)
        for p in params:
            if p.grad is not None and p.grad.dtype == _C.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_C.float32, device=self._scale.device)
        total = unscale_and_clip_grad_norm_(params, max_norm, norm_type=norm_type, error_if_nonfinite=error_if_nonfinite,
                                            inv_scale=inv_scale, found_inf=found_inf)
        state["found_inf_per_device"] = {str(found_inf.device): found_inf}
        state["stage"] = OptState.UNSCALED
        return total

    def _check_inf_per_device(self, optimizer):
        self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = full((), 1.0, dtype=_C.float32, device=self._scale.device)
        found_inf = full((), 0.0, dtype=_C.float32, device=self._scale.device)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (unless already done) then optimizer.step() unless the gradients held inf/NaN.
        Optimizers that take grad_scale/found_inf skip on the device without a host sync."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY and self._per_loss_mode():
            self._restore_stash(optimizer, state)
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            if state["stage"] is OptState.READY:
                # ampgrad's optimizers skip on the device like torch's fused ones, but FP16 gradients are
                # refused as torch's default (non-fused) optimizers refuse them in unscale_.
                if not getattr(optimizer, "defaults", {}).get("fused"):
                    for group in optimizer.param_groups:
                        for param in group["params"]:
                            if param.grad is not None and param.grad.dtype == _C.float16:
                                raise ValueError("Attempting to unscale FP16 gradients.")
                self._check_inf_per_device(optimizer)
            found = list(state["found_inf_per_device"].values())
            found_inf = found[0]
            for f in found[1:]:
                found_inf = found_inf + f.to(found_inf.device)
            optimizer.grad_scale = (getattr(optimizer, "grad_scale", None) if state["stage"] is OptState.UNSCALED
                                    else self._scale * getattr(optimizer, "grad_scale", 1))
            optimizer.found_inf = found_inf
            try:
                retval = optimizer.step(*args, **kwargs)
            finally:
                del optimizer.grad_scale
                del optimizer.found_inf
            state["stage"] = OptState.STEPPED
            return retval
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Updates the scale: backoff if any optimizer saw inf/NaN this iteration, growth after
        growth_interval clean iterations; or sets it to `new_scale`."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [f.to(_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for f in found_infs[1:]:
                found_inf_combined = found_inf_combined + f
            if self._loss_found_inf:
                # Per-loss scales: each scale follows its own loss's overflows only.
                for i, f in self._loss_found_inf.items():
                    sc, tr = (_scale, _growth_tracker) if i == 0 else self._loss_scales[i]
                    self._update_one(i, sc, tr, f)
            else:
                self._update_one(0, _scale, _growth_tracker, found_inf_combined)
            self._steps += 1
            scales = {0: _scale.clone()}
            scales.update({i: slot[0].clone() for i, slot in self._loss_scales.items()})
            self._history.append((self._steps, scales, found_inf_combined.clone()))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)
        self._loss_found_inf = {}
        self._scaled_loss_ids = set()

    def _update_one(self, loss_id, scale, tracker, found_inf):
        """torch's update rule (the C++ kernel), then hysteresis and the [min_scale, max_scale] range."""
        if self._hysteresis == 1 and self._min_scale is None and self._max_scale is None:
            _C._amp_update_scale_(scale, tracker, found_inf, self._growth_factor, self._backoff_factor,
                                  self._growth_interval)
            return
        with no_grad():
            before = scale.clone()
            _C._amp_update_scale_(scale, tracker, found_inf, self._growth_factor, self._backoff_factor,
                                  self._growth_interval)
            if self._hysteresis > 1:
                if self._hysteresis_tracker is None:
                    self._hysteresis_tracker = {}
                h = self._hysteresis_tracker.get(loss_id)
                if not isinstance(h, _C.Tensor):
                    h = full((), self._hysteresis if h is None else h, dtype=_C.int32, device=scale.device)
                    self._hysteresis_tracker[loss_id] = h
                overflow = found_inf > 0
                # An overflowing step uses up one unit of hysteresis; the scale backs off only when none is
                # left (and then on every further consecutive overflow); a finite step re-arms it.
                h_new = _C.where(overflow, (h - 1).clamp(min=0), full((), self._hysteresis, dtype=_C.int32,
                                                                        device=scale.device))
                keep = overflow & (h_new > 0)
                scale.copy_(_C.where(keep, before, scale))
                h.copy_(h_new)
            if self._min_scale is not None or self._max_scale is not None:
                lo = self._min_scale if self._min_scale is not None else 0.0
                hi = self._max_scale if self._max_scale is not None else float("inf")
                value = scale.item()
                if value < lo or value > hi:
                    bound = "min_scale" if value < lo else "max_scale"
                    clamped = lo if value < lo else hi
                    warnings.warn(f"GradScaler: the loss scale{'' if loss_id == 0 else f' of loss_id={loss_id}'} "
                                  f"would be {value:g}, outside [{lo:g}, {hi:g}]; clamped to {bound}={clamped:g}."
                                  + (" The gradients overflow even at min_scale: look for the overflowing op "
                                     "(ampgrad.amp.debug.inspect)." if bound == "min_scale" else ""),
                                  RuntimeWarning, stacklevel=3)
                    scale.fill_(clamped)

    def stats(self):
        """steps (update() calls), skipped_steps (iterations whose gradients held inf/NaN, so the
        optimizer step was skipped), scale_history [(step, scale, skipped)], and per-loss histories."""
        def num(x):
            return x.item() if isinstance(x, _C.Tensor) else x
        hist = [(step, {i: num(v) for i, v in scales.items()}, bool(num(f) > 0)) for step, scales, f in self._history]
        out = {"steps": self._steps, "skipped_steps": sum(1 for _, _, skipped in hist if skipped),
               "scale": self.get_scale(),
               "scale_history": [(step, scales[0], skipped) for step, scales, skipped in hist]}
        if self._loss_scales:
            out["loss_scales"] = {i: slot[0].item() for i, slot in self._loss_scales.items()}
            out["loss_scales"][0] = out["scale"]
            out["loss_scale_history"] = {i: [(step, scales[i]) for step, scales, _ in hist if i in scales]
                                         for i in out["loss_scales"]}
        if self._hysteresis > 1:
            out["hysteresis"] = self._hysteresis
        return out

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (a host sync)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """torch's keys; the ampgrad extensions add their own keys only when they are in use."""
        if self._enabled:
            out = {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                   "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                   "_growth_tracker": self._get_growth_tracker()}
            if self._min_scale is not None:
                out["min_scale"] = self._min_scale
            if self._max_scale is not None:
                out["max_scale"] = self._max_scale
            if self._hysteresis != 1:
                out["hysteresis"] = self._hysteresis
                out["_hysteresis_tracker"] = {i: int(h.item()) if isinstance(h, _C.Tensor) else int(h)
                                              for i, h in (self._hysteresis_tracker or {}).items()}
            if self._loss_scales or self._loss_init:
                ls = {i: (slot[0].item(), int(slot[1].item())) for i, slot in self._loss_scales.items()}
                ls.update({i: v for i, v in self._loss_init.items() if i not in ls})
                out["loss_scales"] = ls
            return out
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
        # ampgrad's extensions (absent from torch's state dicts: then the current settings stay).
        if "min_scale" in state_dict:
            self._min_scale = state_dict["min_scale"]
        if "max_scale" in state_dict:
            self._max_scale = state_dict["max_scale"]
        if "hysteresis" in state_dict:
            self._hysteresis = state_dict["hysteresis"]
            self._hysteresis_tracker = dict(state_dict.get("_hysteresis_tracker", {}))
        if "loss_scales" in state_dict:
            self._loss_scales = {}
            self._loss_init = {int(i): (float(v[0]), int(v[1])) for i, v in state_dict["loss_scales"].items()}

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            # Pickle the scale and tracker as Python numbers, as torch does.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            loss_init = dict(self._loss_init)
            loss_init.update({i: (slot[0].item(), int(slot[1].item())) for i, slot in self._loss_scales.items()})
            state["_loss_init"] = loss_init
            state["_loss_scales"] = {}
            if self._hysteresis_tracker:
                state["_hysteresis_tracker"] = {i: int(h.item()) if isinstance(h, _C.Tensor) else int(h)
                                                for i, h in self._hysteresis_tracker.items()}
            state["_history"] = deque(((st, {i: s.item() for i, s in sc.items()}, f.item()) for st, sc, f in self._history),
                                      maxlen=self._history.maxlen)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
