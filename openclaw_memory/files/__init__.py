"""The Markdown side: the workspace and its one path gate, reading cited lines, appending notes.

Everything that touches a user's files goes through :mod:`.workspace` (discovery, the path gate,
symlink and hard-link rules); :mod:`.notes` reads line ranges back and appends notes;
:mod:`.atomic` writes files whole or not at all.
"""
