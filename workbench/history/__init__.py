"""History values, the readers that build them, and the canonical writer."""

from workbench.history.model import (
    ROLES,
    History,
    Message,
    Part,
    text_part,
    tool_call_part,
    tool_result_part,
)

__all__ = ["ROLES", "History", "Message", "Part", "text_part", "tool_call_part", "tool_result_part"]
