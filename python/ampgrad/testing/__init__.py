"""ampgrad.testing: torch.testing's assert_close and make_tensor, with torch's semantics, default
tolerances and messages (so `import ampgrad as torch` test suites keep working)."""
from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
