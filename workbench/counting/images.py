"""What an image costs in tokens, by the provider's own rule instead of the length of its base64 text.

Rules (``image_token_rule`` knob):
- ``serialized``: the image's text as it sits in the message, as stagewise's own estimator counts it
  (stagewise's default; exact for its golden cases, absurd for billing: a 415 KB PNG is ~104k tokens).
- ``anthropic``: tokens = width x height / 750, after scaling the image down (aspect kept) until its long
  edge is at most 1,568 px and it costs at most ~1,600 tokens (Anthropic, "Vision" guide,
  docs.anthropic.com/en/docs/build-with-claude/vision, "Evaluate image size" / "Calculate image costs").
- ``openai``: high detail: fit in 2,048 x 2,048, scale the short side down to 768, then 170 tokens per
  512-px tile plus 85 (OpenAI, "Images and vision", platform.openai.com/docs/guides/images-vision,
  "Calculating costs", GPT-4o/4.1 family).
- ``fixed``: ``image_default_tokens`` per image, e.g. Codex's own client estimate of a resized image:
  7,373 bytes at 4 bytes a token = 1,844 (openai/codex@023fad268e08 codex-rs/core/src/context_manager/
  history.rs, ``RESIZED_IMAGE_BYTES_ESTIMATE``).
An image whose pixel size is unknown (a plain URL, a redacted payload) costs ``image_default_tokens``.
"""

from __future__ import annotations

import math

from workbench.history.images import ImageRef
from workbench.knobs import IMAGE_TOKEN_RULES

ANTHROPIC_LONG_EDGE_PX = 1568
ANTHROPIC_MAX_TOKENS = 1600
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_FIT_PX = 2048
OPENAI_SHORT_SIDE_PX = 768
OPENAI_TILE_PX = 512
OPENAI_TILE_TOKENS = 170
OPENAI_BASE_TOKENS = 85
CODEX_IMAGE_ESTIMATE_TOKENS = math.ceil(7373 / 4)  # 1,844


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's rule: w x h / 750 after scaling to a 1,568-px long edge and ~1,600 tokens."""
    w, h = float(width), float(height)
    long_edge = max(w, h)
    if long_edge > ANTHROPIC_LONG_EDGE_PX:
        scale = ANTHROPIC_LONG_EDGE_PX / long_edge
        w, h = w * scale, h * scale
    tokens = w * h / ANTHROPIC_PIXELS_PER_TOKEN
    if tokens > ANTHROPIC_MAX_TOKENS:
        scale = math.sqrt(ANTHROPIC_MAX_TOKENS / tokens)
        w, h = w * scale, h * scale
    return max(1, math.ceil(math.floor(w) * math.floor(h) / ANTHROPIC_PIXELS_PER_TOKEN))


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail tile rule for the GPT-4o/4.1 family."""
    w, h = float(width), float(height)
    if max(w, h) > OPENAI_FIT_PX:
        scale = OPENAI_FIT_PX / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > OPENAI_SHORT_SIDE_PX:
        scale = OPENAI_SHORT_SIDE_PX / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / OPENAI_TILE_PX) * math.ceil(h / OPENAI_TILE_PX)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def image_tokens(ref: ImageRef, rule: str, default_tokens: int) -> int:
    """Tokens one image costs under ``rule`` (not used for ``serialized``, which counts its text)."""
    if rule == "fixed" or not (ref.width and ref.height):
        return default_tokens
    if rule == "anthropic":
        return anthropic_image_tokens(ref.width, ref.height)
    if rule == "openai":
        return openai_image_tokens(ref.width, ref.height)
    raise ValueError(f"image_token_rule must be one of {', '.join(IMAGE_TOKEN_RULES)}, got {rule!r}")
