"""``python -m openclaw_memory`` runs the CLI."""

import sys

from .cli import main

sys.exit(main())
