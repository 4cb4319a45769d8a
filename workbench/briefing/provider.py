"""The provider library, litellm, imported the one way the workbench uses it: offline and quiet.

Imported inside the call paths that send a request (the live briefer, the pre-flight check, the judge, the
endpoint test), never at module level, so a replay without a live briefer never loads it.
"""

from __future__ import annotations

import os
from typing import Any


def import_litellm() -> Any:
    """Import litellm with its bundled price map (no network fetch) and its banners off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
