"""``python -m openclaw_memory`` runs the CLI."""

import sys

from openclaw_memory.cli.app import main

sys.exit(main())
