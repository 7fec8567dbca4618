"""Parts of the settings models; ``openclaw_memory.config`` is where they are imported from."""
