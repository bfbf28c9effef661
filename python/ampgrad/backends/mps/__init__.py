"""ampgrad.backends.mps: ampgrad has no Metal backend; is_available() and is_built() are False."""

__all__ = ["is_available", "is_built", "is_macos_or_newer"]


def is_available():
    return False


def is_built():
    return False


def is_macos_or_newer(major, minor):
    return False
