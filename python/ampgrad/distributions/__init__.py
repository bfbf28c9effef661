"""torch.distributions (the part programs use so far): Distribution, Categorical, Normal, constraints
and utils, with torch's definitions (sampling through ampgrad's multinomial / normal streams, which
follow torch's CPU generator)."""
from . import constraints  # noqa: F401
from . import utils  # noqa: F401
from .distribution import Distribution
from .categorical import Categorical
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Normal", "constraints"]
