"""Writing files so that nothing the user had is lost: atomic writes (``files``) and append-only logs (``append``).

The lowest floor: it imports nothing from the package, and every layer that writes (the canonical writer, the
analyses' exports, exploration's results, the faces) goes through it.
"""
