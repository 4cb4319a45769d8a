"""What the faces show a person, shared below them: words for identifiers (``labels``) and text read from a
history shown as text, never as Markdown or HTML (``untrusted``). No streamlit import: ``plots``, ``ui`` and
``cli`` all use it.
"""
