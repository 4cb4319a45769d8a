"""Token counters (stagewise's estimate, offline tiktoken) counted once per message, and provider prices."""
