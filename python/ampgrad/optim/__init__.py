"""ampgrad.optim (filled below)."""
